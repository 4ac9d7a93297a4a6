/**
 * A backend restart is not someone else managing the logins (`src/queue/contest.ts`): a cache
 * restarted empty three times within the contested window makes every login missing three
 * times, each healed without a record write, and no consumer is contested, said or counted. A
 * login dropped by hand three times while its cache kept the others is.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('contested logins and backend restarts', () => {
  const fixture = engineFixtures();

  it('a cache restarted empty three times marks no consumer contested; one login dropped by hand three times is', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 8,
      timing: { verifyEvery: '1s', checkTimeout: '1s', contestedWindow: '10m' },
    });
    const engine = await f.startHeld();
    await f.until('every record settled', () => f.settled());
    const quietMissing = () =>
      f.logs.filter((l) => l.recorded === false && typeof l.reason === 'string' && l.reason.startsWith('missing'))
        .length;
    const contestedSaid = () => f.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes(' is contested: '));
    const contestedNow = async () =>
      (await engine.coordination.contests.contested(['cache'], Date.now(), 100)).get('cache')!;

    for (let restart = 1; restart <= 3; restart++) {
      const before = quietMissing();
      await provider.restart();
      await f.until(
        `every consumer back after restart ${restart}`,
        async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
        30_000,
      );
      await f.until(`every consumer held after restart ${restart}`, () => f.allHeld(), 30_000);
      // the restart's losses were found missing and healed as findings are (not all through could-not-ask)
      expect(quietMissing() - before, `restart ${restart}`).toBeGreaterThanOrEqual(2);
    }
    expect(contestedSaid()).toEqual([]);
    expect(await contestedNow()).toEqual({ count: 0, listed: [] });

    // a login dropped by hand while the cache keeps the others (once the restart's wave is over: twice verifyEvery
    // without a login found missing): three times is contested
    await new Promise((r) => setTimeout(r, 2500));
    const [victim] = f.consumers;
    const healsBefore = f.logsFor(victim!).filter((l) => l.recorded === false).length;
    const admin = new Redis({
      host: provider.host,
      port: provider.port,
      username: provider.admin.username,
      password: provider.admin.password,
    });
    try {
      for (let drop = 1; drop <= 3; drop++) {
        await admin.call('ACL', 'DELUSER', victim!.login);
        await f.until(
          `drop ${drop} healed`,
          async () => (await f.canLogin(victim!)) && (await admin.call('ACL', 'GETUSER', victim!.login)) !== null,
          10_000,
        );
        // each heal is its own finding (a drop healed before the next one)
        await f.until(
          `drop ${drop} noted`,
          () => f.logsFor(victim!).filter((l) => l.recorded === false).length >= healsBefore + drop,
          10_000,
        );
      }
    } finally {
      admin.disconnect();
    }
    await f.until('the dropped one said contested', () => contestedSaid().length > 0, 10_000);
    expect(contestedSaid().map((l) => l.consumer)).toEqual([victim!.key]);
    expect((await contestedNow()).listed.map((c) => c.key)).toEqual([victim!.key]);
  }, 180_000);
});
