/** Two workers on one queue: never both on one consumer, and no consumer lost. */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { engineFixtures } from './engine-fixture.js';
import { RecordingAdapter, type Call } from './test-adapters.js';

describe('two workers on the same queue', () => {
  const fixture = engineFixtures();

  it('never act on the same consumer at once, and every consumer ends held', async () => {
    const f = await fixture({ consumers: 200, timing: { verifyEvery: '10s', checkTimeout: '2s' }, concurrency: 8 });
    const admin = f.config.providers[0]!.admin;
    const detector = { inFlight: new Map<string, Call>(), overlaps: [] as string[] };
    const first = new RecordingAdapter(redisAcl.connect(admin, ownershipOf(f.config.providers[0]!)), detector);
    const second = new RecordingAdapter(redisAcl.connect(admin, ownershipOf(f.config.providers[0]!)), detector);
    const [a, b] = [
      await f.start({ sync: true, worker: true }, first),
      await f.start({ sync: false, worker: true }, second),
    ];
    const t0 = Date.now();
    await f.until('every consumer held', () => f.allHeld(), 90_000);
    console.log(`[two workers] 200 consumers held after ${Date.now() - t0} ms`);

    // contention on purpose: a quarter of the consumers asked to check now, twice at once, while waits run
    const contended = f.consumers.slice(0, 50);
    const burstStart = Date.now();
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        contended.flatMap((c) => [
          a.queue.send(c.key, { type: 'CHECK_NOW' }),
          b.queue.send(c.key, { type: 'CHECK_NOW' }),
        ]),
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
    // every contended consumer is asked once per ask sent (four), each ask alone
    const asked = (login: string) =>
      [...first.calls, ...second.calls].filter(
        (c) => c.method === 'holds' && c.login === login && c.start >= burstStart,
      ).length;
    const t1 = Date.now();
    await f.until('every ask served', () => contended.every((c) => asked(c.login) >= 4), 60_000);
    await f.until('every consumer held', () => f.allHeld(), 60_000);
    console.log(`[two workers] every ask served and held ${Date.now() - t1} ms after the last burst`);

    expect(detector.overlaps).toEqual([]);
    expect(first.calls.length).toBeGreaterThan(100);
    expect(second.calls.length).toBeGreaterThan(100);

    const logins = await Promise.all(f.consumers.map((c) => f.canLogin(c)));
    expect(logins.filter((ok) => !ok)).toEqual([]);
    const failed = await a.queue.queue.getFailedCount();
    expect(failed).toBe(0);
  }, 240_000);
});
