/**
 * A queue of three shards (`queue.shards: 3`) on one Redis: the consumers' keys spread over
 * the three hash tags, each consumer's in its own shard; the faults the engine heals still heal
 * (the cache restarted empty, the queue flushed or one shard's keys lost, two workers); and a
 * change of `queue.shards` (1, then 3, then 2) keeps every consumer held and checked, never
 * two checks of one consumer at once, and clears the waits left in a shard that is no longer the
 * consumer's.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import type { ConsumerQueue } from '../../../src/schedule/consumer-queue.js';
import { shardOf } from '../../../src/queue/shard-of.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { dueWaitsPerShard } from '../../support/due-set.js';
import { keysPerShard } from '../../support/key-spread.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';
import { RecordingAdapter, type Call } from './test-adapters.js';

const PREFIX = '{hf{tag}}';

/**
 * The consumers whose waits each shard holds, by key: how many (in its due set, and as wait
 * jobs waiting, delayed or running in its queue: a consumer's wait must be in one place only).
 */
async function waitsPerShard(
  redis: Redis,
  prefixes: readonly string[],
  queues: ConsumerQueue['queues'],
): Promise<Array<Map<string, number>>> {
  const due = await dueWaitsPerShard(redis, prefixes);
  return Promise.all(
    queues.map(async (queue, shard) => {
      const counts = new Map<string, number>(due[shard]!.map((key) => [key, 1]));
      for (const job of await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized'])) {
        if (job?.data.kind === 'wait') counts.set(job.data.key, (counts.get(job.data.key) ?? 0) + 1);
      }
      return counts;
    }),
  );
}

/** Every consumer checked since `since` (by the status). */
async function checkedSince(f: EngineFixture, since: number): Promise<boolean> {
  const { consumers } = await f.status();
  return (
    consumers.length === f.consumers.length &&
    consumers.every((c) => c.lastCheck !== null && Date.parse(c.lastCheck.at) > since)
  );
}

describe('a queue of three shards', () => {
  const fixture = engineFixtures();

  it("spreads the consumers' keys over all three hash tags, each consumer's in its own shard, and shows every shard's queue", async () => {
    const f = await fixture({
      consumers: 30,
      shards: 3,
      prefix: PREFIX,
      timing: { verifyEvery: '1s', checkTimeout: '500ms' },
    });
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    await f.until('every consumer settled', () => f.settled());
    const prefixes = shardPrefixes(f.config.queue.prefix, 3);
    expect(prefixes).toEqual([0, 1, 2].map((i) => `{hf${f.tag}-${i}}`));

    const redis = new Redis(sharedBackend('redis').url);
    const perTag = await keysPerShard([redis], prefixes);
    console.log(`[shards] keys per hash tag ${prefixes.map((p, i) => `${p}: ${perTag[i]}`).join(', ')}`);
    expect(perTag.every((n) => n > 0)).toBe(true);
    // nothing under the prefix as configured but the record of the layout: the shards are all there is
    expect(await redis.keys(`${f.config.queue.prefix}:*`)).toEqual([`${f.config.queue.prefix}:holdfast:layout`]);
    expect(await redis.get(`${f.config.queue.prefix}:holdfast:layout`)).toBe('3 1');
    for (const [shard, prefix] of prefixes.entries()) {
      const own = f.consumers
        .filter((c) => shardOf(c.key, 3) === shard)
        .map((c) => c.key)
        .sort();
      expect(own.length).toBeGreaterThan(0);
      expect((await redis.hkeys(`${prefix}:holdfast:states`)).sort()).toEqual(own);
      expect((await redis.hkeys(`${prefix}:holdfast:checks`)).sort()).toEqual(own);
    }
    // each consumer's wait is in its own shard's due set, once, and nowhere else
    await f.until('each wait in its own shard', async () => {
      const waits = await waitsPerShard(redis, prefixes, engine.queue.queues);
      return f.consumers.every((c) =>
        waits.every((inShard, shard) => (inShard.get(c.key) ?? 0) === (shard === shardOf(c.key, 3) ? 1 : 0)),
      );
    });
    redis.disconnect();

    const status = await f.status();
    expect(status.consumers).toHaveLength(30);
    expect(status.healthy).toBe(true);
    const server = await f.httpServer(engine, metrics);
    try {
      // the metrics count every shard's waits: one per consumer
      await f.until('the metrics count every wait', async () => {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        return /^holdfast_due_waits\{state="scheduled"\} 30$/m.test(text);
      });
      const board = (await (await fetch(`${server.url}/queues/api/queues`)).json()) as {
        queues: Array<{ name: string }>;
      };
      // each shard's consumers' queue, and its rounds'
      expect(board.queues.map((q) => q.name).sort()).toEqual(
        prefixes.flatMap((p) => [`${p}:consumers`, `${p}:consumers-rounds`]),
      );
    } finally {
      await server.close();
    }
  });

  it("heals a cache restarted without an ACL file at each consumer's next check, in every shard", async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 60,
      shards: 3,
      prefix: PREFIX,
      timing: { verifyEvery: '2s', checkTimeout: '1s' },
    });
    await f.startHeld();
    expect((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean)).toBe(true);

    // taken as the restart begins: the engine may reach the new server (and say what it found) before the
    // test's own readiness probe returns
    const restarted = Date.now();
    await provider.restart();
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);
    const healMs = await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      3 * 2100,
    );
    console.log(
      `[shards] ${f.consumers.length} consumers over 3 shards healed ${healMs} ms after the restart (verifyEvery 2 s)`,
    );
    for (const c of f.consumers) {
      const said = f.logsFor(c).filter((l) => (l.time as number) >= restarted);
      expect(said.map((l) => l.msg)).toContain(
        'not held (missing: the backend has no such ACL user); applying again now',
      );
    }
    await f.until('status healthy', async () => (await f.status()).healthy);
  });

  it("resumes every consumer when the queue is flushed, and when one shard's keys alone are lost", async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({
      queue,
      consumers: 30,
      shards: 3,
      prefix: PREFIX,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms' },
      sentinelEvery: '1s',
    });
    await f.startHeld();
    const admin = new Redis(queue.url);

    await admin.flushall();
    const flushed = Date.now();
    await f.until('every consumer checked again after the flush', () => checkedSince(f, flushed + 500));
    const since = f.logs.filter((l) => (l.time as number) >= flushed);
    expect(since.filter((l) => l.msg.startsWith("the queue's Redis has forgotten every job"))).toHaveLength(1);
    expect(since.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    // the flush took the record of the layout too: the sweep wrote it again, so another worker still starts
    expect(await admin.get(`${f.config.queue.prefix}:holdfast:layout`)).toBe('3 1');
    await f.start({ sync: false, worker: true });

    // what a master that restarts empty does to the shards it serves: shard 1's keys, and only they, gone
    const lostPrefix = shardPrefixes(f.config.queue.prefix, 3)[1]!;
    const lostKeys = await admin.keys(`${lostPrefix}*`);
    expect(lostKeys.length).toBeGreaterThan(0);
    await admin.del(...lostKeys);
    const lost = Date.now();
    const inLostShard = f.consumers.filter((c) => shardOf(c.key, 3) === 1);
    await f.until("the lost shard's consumers checked again", async () => {
      const { consumers } = await f.status();
      return inLostShard.every((c) => {
        const at = consumers.find((s) => s.consumer === c.key)?.lastCheck?.at;
        return at !== undefined && Date.parse(at) > lost + 500;
      });
    });
    expect((await dueWaitsPerShard(admin, shardPrefixes(f.config.queue.prefix, 3))).flat().sort()).toEqual(
      f.consumers.map((c) => c.key).sort(),
    );
    admin.disconnect();
    expect(f.logs.filter((l) => (l.time as number) >= lost && l.level >= 50).map((l) => l.msg)).toEqual([]);
    // said once, naming the shard that forgot, not the whole queue
    const forgot = f.logs
      .filter((l) => (l.time as number) >= lost && / forgot every job|forgotten every job/.test(l.msg))
      .map((l) => l.msg);
    expect(forgot).toEqual([expect.stringContaining(`queue shard ${lostPrefix} of 3 forgot every job`) as unknown]);
    await f.until('status healthy', async () => (await f.status()).healthy);
  });

  it('two workers take every shard, never act on one consumer at once, and every consumer ends held', async () => {
    const f = await fixture({
      consumers: 120,
      shards: 3,
      prefix: PREFIX,
      timing: { verifyEvery: '10s', checkTimeout: '2s' },
      concurrency: 8,
    });
    const admin = f.config.providers[0]!.admin;
    const detector = { inFlight: new Map<string, Call>(), overlaps: [] as string[] };
    const first = new RecordingAdapter(redisAcl.connect(admin, ownershipOf(f.config.providers[0]!)), detector);
    const second = new RecordingAdapter(redisAcl.connect(admin, ownershipOf(f.config.providers[0]!)), detector);
    const [a, b] = [
      await f.start({ sync: true, worker: true }, first),
      await f.start({ sync: false, worker: true }, second),
    ];
    await f.until('every consumer held', () => f.allHeld(), 90_000);

    const contended = f.consumers.slice(0, 30);
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
    const asked = (login: string) =>
      [...first.calls, ...second.calls].filter(
        (c) => c.method === 'holds' && c.login === login && c.start >= burstStart,
      ).length;
    await f.until('every ask served', () => contended.every((c) => asked(c.login) >= 4), 60_000);
    await f.until('every consumer held', () => f.allHeld(), 60_000);

    expect(detector.overlaps).toEqual([]);
    // each worker served consumers of every shard
    for (const recorder of [first, second]) {
      const shards = new Set(recorder.calls.map((c) => shardOf(f.consumers.find((x) => x.login === c.login)!.key, 3)));
      expect([...shards].sort()).toEqual([0, 1, 2]);
    }
    expect((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean)).toBe(true);
    expect((await Promise.all(a.queue.queues.map((q) => q.getFailedCount()))).every((n) => n === 0)).toBe(true);
  }, 240_000);

  it('changes shards 1 → 3 → 2 → 1 with holdfast stopped: every consumer held and checked, none checked twice at once, none applied again, what the old layouts left cleared', async () => {
    const f = await fixture({ consumers: 40, prefix: PREFIX, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    const admin = f.config.providers[0]!.admin;
    const detector = { inFlight: new Map<string, Call>(), overlaps: [] as string[] };
    const recorder = () => new RecordingAdapter(redisAcl.connect(admin, ownershipOf(f.config.providers[0]!)), detector);
    const run = async (shards: number) => {
      if (shards !== f.config.queue.shards) await f.setShards(shards);
      const adapter = recorder();
      const since = Date.now();
      const engine = await f.start(undefined, adapter);
      await f.until(
        `every consumer checked twice at ${shards} shard(s)`,
        async () => (await checkedSince(f, since)) && adapter.count('holds', since) >= 2 * f.consumers.length,
        30_000,
      );
      return { engine, adapter };
    };

    const one = await run(1);
    await f.until('every consumer held at 1 shard', () => f.allHeld());
    await one.engine.stop();
    f.engines.splice(0);

    const three = await run(3);
    await f.until('every consumer held at 3 shards', () => f.allHeld());
    const redis = new Redis(sharedBackend('redis').url);
    expect((await keysPerShard([redis], shardPrefixes(f.config.queue.prefix, 3))).every((n) => n > 0)).toBe(true);
    await three.engine.stop();
    f.engines.splice(0);
    // a consumer whose shard moves leaves a wait job in its shard of three (a wait handed to the queue): a worker of
    // two shards drops it unrun
    const moved = f.consumers
      .filter((c) => shardOf(c.key, 3) < 2 && shardOf(c.key, 3) !== shardOf(c.key, 2))
      .map((c) => c.key);
    expect(moved.length).toBeGreaterThan(0);
    await f.delayedWaitJob(moved[0]!, 0);

    const resharded = Date.now();
    const two = await run(2);
    await f.until('every consumer held at 2 shards', () => f.allHeld());
    // the moved consumers' waits left in their shards of three were cleared with the shards: each wait is in its own
    // shard alone
    const twoPrefixes = shardPrefixes(f.config.queue.prefix, 2);
    await f.until('each consumer with one wait, in its own shard', async () => {
      const waits = await waitsPerShard(redis, twoPrefixes, two.engine.queue.queues);
      return f.consumers.every((c) =>
        waits.every((inShard, shard) => (inShard.get(c.key) ?? 0) === (shard === shardOf(c.key, 2) ? 1 : 0)),
      );
    });
    const dropped = f.logs
      .filter((l) => (l.time as number) >= resharded && l.msg.startsWith('job dropped as stale: it is in shard'))
      .map((l) => l.consumer);
    expect(dropped).toEqual([moved[0]]);

    // no shard keeps what consumers of the other layouts left there: the status reads each consumer once, from its own
    // shard
    for (const [shard, prefix] of shardPrefixes(f.config.queue.prefix, 2).entries()) {
      const own = f.consumers
        .filter((c) => shardOf(c.key, 2) === shard)
        .map((c) => c.key)
        .sort();
      expect((await redis.hkeys(`${prefix}:holdfast:states`)).sort()).toEqual(own);
      expect((await redis.zrange(`${prefix}:holdfast:checked:cache`, 0, -1)).sort()).toEqual(own);
    }
    expect((await f.status()).healthy).toBe(true);

    expect(detector.overlaps).toEqual([]);
    // re-sharding applied nothing again: the records stayed held throughout
    expect(three.adapter.count('create') + two.adapter.count('create')).toBe(0);
    for (const c of f.consumers)
      expect(f.logsFor(c).filter((l) => (l.time as number) >= resharded && l.level >= 40)).toEqual([]);
    expect((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean)).toBe(true);

    // a consumer removed at two shards, then back to one: what the one shard held from before is cleared, no ghost of
    // it stays
    const gone = f.consumers.splice(-1)[0]!;
    f.writeContributions(f.consumers);
    await f.until(
      'the removed consumer gone',
      async () => (await two.engine.store.get(gone.key)) === null && !(await f.canLogin(gone)),
    );
    await two.engine.stop();
    f.engines.splice(0);
    await run(1);
    await f.until('every consumer held at 1 shard again', () => f.allHeld());
    const status = await f.status();
    expect(status.consumers.map((c) => c.consumer)).not.toContain(gone.key);
    expect(status.total).toBe(f.consumers.length);
    expect(status.healthy).toBe(true);
    expect(detector.overlaps).toEqual([]);
    redis.disconnect();

    // a worker on another number of shards than the queue is set up for is refused: it would take other queues and
    // other locks
    await f.setShards(3);
    await expect(f.start({ sync: false, worker: true })).rejects.toThrow(
      "queue.shards is 3 here, but the queue's Redis is set up for 1: every holdfast process must use the same queue.shards",
    );
  }, 180_000);
});
