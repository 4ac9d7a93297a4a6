/**
 * One writer per record: desired specs changing fast while workers keep writing the records
 * (checks every second) on FerretDB, whose updates rewrite whole documents. The last desired
 * state is what the backend ends up holding, for every consumer.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('desired changes racing the workers', () => {
  const fixture = engineFixtures();

  it('are never lost: the backend ends with the last declared spec of every consumer, and without the undeclared', async () => {
    const provider = await ownBackend('redis');
    // checks every second race the desired writes, each given that long (a check may not take
    // longer than the interval): at 200 ms, a 2-core machine at load 15 left most consumers
    // could-not-ask before any change
    const f = await fixture({
      provider,
      consumers: 30,
      timing: { verifyEvery: '1s', checkTimeout: '1s', deepCheckEvery: '1s' },
    });
    await f.start();
    await f.until('every consumer held', () => f.allHeld(), 30_000);

    // 12 rounds, 50 to 250 ms apart: every key pattern changes each round; the last five come and go
    for (let round = 1; round <= 12; round++) {
      const declared = round % 2 === 1 ? f.consumers.slice(0, -5) : f.consumers;
      f.writeContributions(declared, (c) => `${c.id}:r${round}:*`);
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 200)));
    }
    const kept = f.consumers.slice(0, -3);
    const dropped = f.consumers.slice(-3);
    f.writeContributions(kept, (c) => `${c.id}:final:*`);

    const admin = new Redis(provider.url);
    try {
      const keysOf = async (login: string): Promise<unknown> => {
        const reply = (await admin.call('ACL', 'GETUSER', login)) as unknown[] | null;
        return reply ? reply[reply.indexOf('keys') + 1] : null;
      };
      let wrong: string[] = [];
      await f
        .until(
          'the last spec held by every declared consumer, the others gone',
          async () => {
            const keys = await Promise.all(kept.map((c) => keysOf(c.login)));
            const gone = await Promise.all(dropped.map((c) => keysOf(c.login)));
            wrong = [
              ...kept.flatMap((c, i) =>
                keys[i] === `~${c.id}:final:*` ? [] : [`${c.key} holds ${JSON.stringify(keys[i])}`],
              ),
              ...dropped.flatMap((c, i) =>
                gone[i] === null ? [] : [`${c.key} (dropped) still holds ${JSON.stringify(gone[i])}`],
              ),
            ];
            return wrong.length === 0;
          },
          60_000,
        )
        .catch((error: unknown) => {
          throw new Error(`${String(error)}; wrong: ${wrong.join(', ')}`);
        });
      await f.until(
        'status healthy with exactly the declared consumers',
        async () => {
          const status = await f.status();
          return status.healthy && status.consumers.length === kept.length;
        },
        30_000,
      );
      for (const c of kept) expect(await f.canLogin(c)).toBe(true);
      expect(await f.engines[0]!.queue.queue.getFailedCount()).toBe(0);
      expect(f.logs.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      admin.disconnect();
    }
  }, 150_000);
});
