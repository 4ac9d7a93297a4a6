/**
 * A writer of the queue's Redis (or Bull Board before it refused) pauses holdfast's queues, or sets
 * a global rate limit or concurrency on them: every check and heal stops, and BullMQ keeps it across
 * restarts. holdfast undoes it at start-up and at each check of the queue, says so and counts it;
 * while it is in place, `holdfast status` is red naming the queue and what was set. Real Redis,
 * MongoDB wire server, and the CLI.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { sharedBackend } from '../../backends/index.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

/** holdfast's two BullMQ queues, as any client of the queue's Redis reaches them; `close` ends them. */
function queuesOf(f: EngineFixture, redis: Redis) {
  const prefix = f.config.queue.prefix;
  const opts = { connection: redis, prefix, skipMetasUpdate: true };
  const consumers = new Queue('consumers', opts);
  const rounds = new Queue('consumers-rounds', opts);
  return {
    prefix,
    all: [consumers, rounds],
    consumers,
    rounds,
    close: () => Promise.all([consumers.close(), rounds.close()]),
  };
}

/** Whether any of `queues` is paused, rate-limited or concurrency-limited. */
async function anyControl(queues: readonly Queue[]): Promise<boolean> {
  for (const q of queues)
    if ((await q.isPaused()) || (await q.getGlobalRateLimit()) || (await q.getGlobalConcurrency())) return true;
  return false;
}

describe("what stops holdfast's queues from outside", () => {
  const fixture = engineFixtures();
  const provider = sharedBackend('redis');

  it('a pause, then a rate limit and a concurrency set while it runs: each undone at the next check of the queue, said, counted; a dropped login healed after', async () => {
    const f = await fixture({
      provider,
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '500ms' },
      sentinelEvery: '1s',
    });
    const metrics = new Metrics();
    await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const redis = new Redis(sharedBackend('redis').url);
    const admin = new Redis(provider.url);
    const q = queuesOf(f, redis);
    const [dropped, other] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];
    try {
      // paused as Bull Board pauses (Queue.pause) and as a raw write to BullMQ's meta key
      await q.consumers.pause();
      await redis.hset(`${q.prefix}:consumers-rounds:meta`, 'paused', '1');
      await f.until('both queues resumed by holdfast', async () => !(await anyControl(q.all)), 20_000);
      await admin.call('ACL', 'DELUSER', dropped.login);
      await f.until('the login dropped by hand healed', () => f.canLogin(dropped), 20_000);
      const warned = (queue: string, control: string) =>
        f.logs.filter((l) => l.level === 40 && l.queue === `${q.prefix}:${queue}` && l.control === control);
      expect(warned('consumers', 'paused')[0]?.msg).toBe(
        `queue ${q.prefix}:consumers was paused: no job of it runs, so no check or heal, set outside holdfast (Bull Board, or a writer of the queue's Redis); holdfast never sets it, and undid it: checks and heals run again. To stop holdfast, stop its processes`,
      );
      expect(warned('consumers-rounds', 'paused')).toHaveLength(1);

      // a rate limit already reached (1 job per 10 minutes, its window running) and a concurrency of 1
      for (const queue of q.all) {
        await queue.setGlobalRateLimit(1, 600_000);
        await queue.setGlobalConcurrency(1);
        await redis.set(queue.toKey('limiter'), '1000', 'PX', 600_000);
      }
      await f.until('the limits removed by holdfast', async () => !(await anyControl(q.all)), 20_000);
      expect(await redis.exists(q.consumers.toKey('limiter'), q.rounds.toKey('limiter'))).toBe(0);
      await admin.call('ACL', 'DELUSER', other.login);
      await f.until('the login dropped by hand healed', () => f.canLogin(other), 20_000);
      expect(warned('consumers', 'rateLimit')[0]?.msg).toContain(
        `queue ${q.prefix}:consumers was rate-limited to 1 job(s) per 10m, set outside holdfast`,
      );
      expect(warned('consumers-rounds', 'concurrency')[0]?.msg).toContain(
        'limited to 1 job(s) at once across every worker',
      );
      const text = await metrics.text();
      for (const [queue, control] of [
        ['consumers', 'paused'],
        ['consumers-rounds', 'paused'],
        ['consumers', 'rateLimit'],
        ['consumers-rounds', 'concurrency'],
      ])
        expect(text).toContain(
          `holdfast_queue_controls_undone_total{queue="${q.prefix}:${queue}",control="${control}"} 1`,
        );
    } finally {
      await q.close();
      redis.disconnect();
      admin.disconnect();
    }
  }, 120_000);

  it('set while holdfast is down: `holdfast status` red naming each queue and what was set; undone as holdfast starts, a login dropped meanwhile healed', async () => {
    const f = await fixture({ provider, consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    await (await f.startHeld()).stop();
    const redis = new Redis(sharedBackend('redis').url);
    const admin = new Redis(provider.url);
    const q = queuesOf(f, redis);
    const [dropped] = f.consumers as [(typeof f.consumers)[0]];
    const config = join(f.dir, 'holdfast.yaml');
    try {
      await q.consumers.pause();
      await q.rounds.pause();
      await q.consumers.setGlobalRateLimit(1, 600_000);
      await admin.call('ACL', 'DELUSER', dropped.login);

      const status = spawnHoldfast(['status', '-c', config]);
      expect(await exitOf(status)).toBe(1);
      const said = status.output();
      expect(said).toContain(
        `queue ${q.prefix}:consumers is paused: no job of it runs, so no check or heal, set outside holdfast (Bull Board or a writer of the queue's Redis): a running \`holdfast run\` undoes it within sync.sentinelEvery`,
      );
      expect(said).toContain(`queue ${q.prefix}:consumers-rounds is paused`);
      expect(said).toContain(`queue ${q.prefix}:consumers is rate-limited to 1 job(s) per 10m`);

      // undone as it starts (sentinelEvery is 10 s here: not by the periodic check)
      await f.start();
      expect(await anyControl(q.all)).toBe(false);
      await f.until('the login dropped while holdfast was down healed', () => f.canLogin(dropped), 20_000);
      const again = spawnHoldfast(['status', '-c', config]);
      expect(await exitOf(again), again.output()).toBe(0);
      expect(again.output()).not.toContain(`queue ${q.prefix}`);
    } finally {
      await q.close();
      redis.disconnect();
      admin.disconnect();
    }
  }, 120_000);

  it('on a sharded queue, in every shard: a pause of one shard’s rounds and a rate limit of another’s consumers undone', async () => {
    const f = await fixture({ provider, consumers: 4, shards: 2, sentinelEvery: '1s' });
    await f.startHeld();
    const redis = new Redis(sharedBackend('redis').url);
    const [first, second] = shardPrefixes(f.config.queue.prefix, 2) as [string, string];
    const opts = (prefix: string) => ({ connection: redis, prefix, skipMetasUpdate: true });
    const queues = [
      new Queue('consumers', opts(first)),
      new Queue('consumers-rounds', opts(first)),
      new Queue('consumers', opts(second)),
      new Queue('consumers-rounds', opts(second)),
    ];
    try {
      await queues[3]!.pause();
      await queues[0]!.setGlobalRateLimit(1, 600_000);
      await f.until('both undone', async () => !(await anyControl(queues)), 20_000);
      const undone = f.logs.filter((l) => l.level === 40 && typeof l.control === 'string').map((l) => l.queue);
      expect(undone.sort()).toEqual([`${first}:consumers`, `${second}:consumers-rounds`].sort());
    } finally {
      await Promise.all(queues.map((q) => q.close()));
      redis.disconnect();
    }
  }, 120_000);
});
