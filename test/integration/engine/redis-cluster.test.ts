/**
 * holdfast on a real Redis Cluster (3 masters, 3 replicas, local processes) as the queue's
 * Redis (`queue.cluster`): the faults of the single-Redis tests (a cache restarted empty, two
 * workers, the queue flushed) and a failover: the master serving the queue's slot killed with
 * kill -9 while checks run.
 */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { ownBackend, ownRedisCluster, sharedRedisCluster } from '../../backends/index.js';
import { addressOf, flushMasters, keysPerMaster, slotOwner } from '../../backends/redis-cluster.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';
import { RecordingAdapter, type Call } from './test-adapters.js';

/**
 * Whether every consumer's latest check ended after `since` (ms since the epoch); false while the status cannot be
 * read.
 */
async function allCheckedSince(f: EngineFixture, since: number): Promise<boolean> {
  return (await checkedSince(f, since)) === f.consumers.length;
}

/**
 * How many consumers' latest check ended after `since`; 0 while the status cannot be read (the queue's slot failing
 * over).
 */
async function checkedSince(f: EngineFixture, since: number): Promise<number> {
  const status = await f.status().catch(() => null);
  return status?.consumers.filter((c) => c.lastCheck !== null && Date.parse(c.lastCheck.at) > since).length ?? 0;
}

describe('the queue on a Redis Cluster', () => {
  const fixture = engineFixtures();

  it("heals a cache restarted without an ACL file, with every queue key on the master serving the prefix's slot", async () => {
    const cluster = sharedRedisCluster();
    const provider = await ownBackend('redis');
    const f = await fixture({
      queueCluster: cluster,
      provider,
      consumers: 30,
      timing: { verifyEvery: '2s', checkTimeout: '1s' },
    });
    await f.startHeld();
    const prefix = f.config.queue.prefix;
    const owner = addressOf(await slotOwner(cluster, prefix));
    const spread = await keysPerMaster(cluster, `${prefix}*`);
    expect([...spread.entries()].filter(([, n]) => n > 0).map(([master]) => master)).toEqual([owner]);

    await provider.restart();
    const restarted = Date.now();
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);
    const healMs = await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      15_000,
    );
    console.log(
      `[cluster] ${f.consumers.length} consumers healed ${healMs} ms after the cache restarted (verifyEvery 2 s); queue keys on ${owner}: ${spread.get(owner)}`,
    );
    for (const c of f.consumers) {
      expect(
        f
          .logsFor(c)
          .filter((l) => (l.time as number) >= restarted)
          .map((l) => l.msg),
      ).toContain('not held (missing: the backend has no such ACL user); applying again now');
    }
    await f.until('status healthy', async () => (await f.status()).healthy);
    expect(f.logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
  });

  it('runs two workers on one queue: never both on one consumer, every consumer held', async () => {
    const f = await fixture({
      queueCluster: sharedRedisCluster(),
      consumers: 60,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      concurrency: 8,
    });
    const provider = f.config.providers[0]!;
    const detector = { inFlight: new Map<string, Call>(), overlaps: [] as string[] };
    const [first, second] = [0, 1].map(
      () => new RecordingAdapter(redisAcl.connect(provider.admin, ownershipOf(provider)), detector),
    ) as [RecordingAdapter, RecordingAdapter];
    const [a, b] = [
      await f.start({ sync: true, worker: true }, first),
      await f.start({ sync: false, worker: true }, second),
    ];
    await f.until('every consumer held', () => f.allHeld(), 60_000);
    // contention on purpose: every consumer asked to check now by both workers' queues at once, while waits run
    const burst = Date.now();
    await Promise.all(
      f.consumers.flatMap((c) => [
        a.queue.send(c.key, { type: 'CHECK_NOW' }),
        b.queue.send(c.key, { type: 'CHECK_NOW' }),
      ]),
    );
    await f.until('every consumer checked since', () => allCheckedSince(f, burst + 2000), 30_000);
    expect(detector.overlaps).toEqual([]);
    expect(first.calls.length).toBeGreaterThan(20);
    expect(second.calls.length).toBeGreaterThan(20);
    expect(f.logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    expect(await a.queue.queue.getFailedCount()).toBe(0);
    expect((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean)).toBe(true);
  });

  it('says once that the queue forgot its jobs when every master is flushed under running checks, and resumes them all', async () => {
    const cluster = await ownRedisCluster();
    const f = await fixture({
      queueCluster: cluster.endpoint,
      consumers: 40,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms' },
      sentinelEvery: '1s',
    });
    await f.startHeld();
    // the masters are flushed one after another: what follows is told from when the first was
    const flushed = Date.now();
    await flushMasters(cluster.endpoint);
    expect(
      [...(await keysPerMaster(cluster.endpoint, `${f.config.queue.prefix}*`)).values()].reduce((a, b) => a + b, 0),
    ).toBeLessThan(40);
    await f.until('every consumer checked again', () => allCheckedSince(f, flushed + 500), 30_000);
    const since = f.logs.filter((l) => (l.time as number) >= flushed);
    expect(since.filter((l) => l.msg.startsWith("the queue's Redis has forgotten every job"))).toHaveLength(1);
    expect(since.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    // green again (a check that missed its 300 ms deadline on a loaded machine is could-not-ask until the next)
    await f.until('status healthy', async () => (await f.status()).healthy, 10_000);
  });

  it("rides out a failover of the master serving the queue's slot: checks resume, no consumer is lost, the outage is said once by name", async () => {
    const cluster = await ownRedisCluster({ nodeTimeoutMs: 2000 });
    const verifyEveryMs = 1000;
    const f = await fixture({
      queueCluster: cluster.endpoint,
      consumers: 40,
      timing: { verifyEvery: `${verifyEveryMs}ms`, checkTimeout: '1s' },
      sentinelEvery: '1s',
    });
    await f.startHeld();
    const sentinel = coordinationKeys(holdfastPrefix(f.config.queue.prefix)).alive;
    const victim = addressOf(await slotOwner(cluster.endpoint, sentinel));
    await f.until('checks running', () => allCheckedSince(f, Date.now() - 2 * verifyEveryMs));

    cluster.kill(await slotOwner(cluster.endpoint, sentinel));
    const killed = Date.now();
    const promotedMs = await f.until(
      'a replica promoted',
      async () => (await slotOwner(cluster.endpoint, sentinel).then(addressOf, () => victim)) !== victim,
      30_000,
    );
    // when the first check after the kill ended, as the status reads it
    let resumedAt = 0;
    await f.until(
      'a check after the kill',
      async () => {
        const ended = ((await f.status().catch(() => null))?.consumers ?? [])
          .flatMap((c) => (c.lastCheck ? [Date.parse(c.lastCheck.at)] : []))
          .filter((at) => at > killed);
        resumedAt = ended.length > 0 ? Math.min(...ended) : 0;
        return resumedAt > 0;
      },
      30_000,
    );
    // nothing lost: every consumer has its next step again, checked within the sentinel interval and a few verify
    // intervals
    const promoted = killed + promotedMs;
    const allMs =
      (await f.until('every consumer checked after the promotion', () => allCheckedSince(f, promoted), 30_000)) +
      promotedMs;
    const lost = f.consumers.length - (await checkedSince(f, promoted));
    const load = (await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `[cluster failover] ${victim} killed (kill -9); replica ${addressOf(await slotOwner(cluster.endpoint, sentinel))} serving the slot after ${promotedMs} ms; ` +
        `first check ended ${resumedAt - killed} ms after the kill; every consumer checked ${allMs} ms after it; consumers lost: ${lost}; load ${load}`,
    );
    expect(lost).toBe(0);
    await f.until('status healthy', async () => (await f.status()).healthy);

    const since = f.logs.filter((l) => (l.time as number) >= killed);
    // the outage said once, naming the node; the failover said once; no job failed for it
    expect(
      since.filter((l) => l.msg.startsWith(`the queue's Redis node ${victim}`) && l.msg.includes('does not answer')),
    ).toHaveLength(1);
    expect(since.filter((l) => l.msg.includes(`is now served by`) && l.msg.includes(`(was ${victim})`))).toHaveLength(
      1,
    );
    expect(since.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    expect(await f.engines[0]!.queue.queue.getFailedCount()).toBe(0);
  }, 120_000);
});
