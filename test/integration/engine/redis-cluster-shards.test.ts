/**
 * `queue.shards: 3` on a real Redis Cluster of 3 masters (and 3 replicas): the consumers' queue
 * keys spread over every master, and the faults still hold (a cache restarted empty is healed,
 * a shard's master killed fails over without losing a consumer).
 */
import { describe, expect, it } from 'vitest';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { shardOf } from '../../../src/queue/shard-of.js';
import { ownBackend, ownRedisCluster, sharedRedisCluster } from '../../backends/index.js';
import {
  addressOf,
  clusterMasters,
  keysPerMaster,
  nodeClient,
  slotOwner,
  type RedisClusterEndpoint,
} from '../../backends/redis-cluster.js';
import { prefixOverMasters } from '../../support/cluster-prefix.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';

const SHARDS = 3;

/** Keys of the prefix's shards on each master (`host:port` → count). */
async function spreadOf(cluster: RedisClusterEndpoint, prefix: string): Promise<Map<string, number>> {
  const spread = new Map<string, number>();
  for (const shard of shardPrefixes(prefix, SHARDS)) {
    for (const [master, n] of await keysPerMaster(cluster, `${shard}*`))
      spread.set(master, (spread.get(master) ?? 0) + n);
  }
  return spread;
}

async function checkedSince(f: EngineFixture, since: number, keys = f.consumers.map((c) => c.key)): Promise<number> {
  const status = await f.status().catch(() => null);
  const wanted = new Set(keys);
  return (
    status?.consumers.filter(
      (c) => wanted.has(c.consumer) && c.lastCheck !== null && Date.parse(c.lastCheck.at) > since,
    ).length ?? 0
  );
}

/**
 * How many consumers of `shards` ended a check after `since`, as each shard's master says (the status reads every
 * shard, so it fails while one is down).
 */
async function checkedOnShards(
  cluster: RedisClusterEndpoint,
  f: EngineFixture,
  shards: number[],
  since: number,
): Promise<number> {
  const counts = await Promise.all(
    shards.map(async (shard) => {
      const keys = coordinationKeys(holdfastPrefix(shardPrefixes(f.config.queue.prefix, SHARDS)[shard]!));
      const client = nodeClient(cluster, await slotOwner(cluster, keys.alive));
      try {
        return await client.zcount(keys.checked(f.config.providers[0]!.name), since, '+inf');
      } finally {
        client.disconnect();
      }
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

describe('queue shards on a Redis Cluster', () => {
  const fixture = engineFixtures();

  it('spreads the consumers over every master, and heals a cache restarted without an ACL file', async () => {
    const cluster = sharedRedisCluster();
    const provider = await ownBackend('redis');
    const prefix = await prefixOverMasters(cluster, SHARDS);
    const f = await fixture({
      queueCluster: cluster,
      provider,
      prefix,
      shards: SHARDS,
      consumers: 30,
      timing: { verifyEvery: '2s', checkTimeout: '1s' },
    });
    await f.startHeld();
    const spread = await spreadOf(cluster, prefix);
    const masters = (await clusterMasters(cluster)).map(addressOf);
    console.log(
      `[cluster shards] queue keys per master: ${masters.map((m) => `${m}: ${spread.get(m) ?? 0}`).join(', ')}`,
    );
    for (const master of masters) expect(spread.get(master) ?? 0).toBeGreaterThan(10);

    await provider.restart();
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);
    const healMs = await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      15_000,
    );
    console.log(
      `[cluster shards] ${f.consumers.length} consumers over ${SHARDS} shards healed ${healMs} ms after the cache restarted (verifyEvery 2 s)`,
    );
    await f.until('status healthy', async () => (await f.status()).healthy);
    expect(f.logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
  });

  it("rides out a failover of one shard's master: the other shards keep checking, no consumer is lost", async () => {
    const cluster = await ownRedisCluster({ nodeTimeoutMs: 2000 });
    const prefix = await prefixOverMasters(cluster.endpoint, SHARDS);
    const f = await fixture({
      queueCluster: cluster.endpoint,
      prefix,
      shards: SHARDS,
      consumers: 45,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      sentinelEvery: '1s',
    });
    await f.startHeld();
    const sentinel = coordinationKeys(holdfastPrefix(shardPrefixes(prefix, SHARDS)[1]!)).alive;
    const victim = await slotOwner(cluster.endpoint, sentinel);
    const others = f.consumers.filter((c) => shardOf(c.key, SHARDS) !== 1).map((c) => c.key);

    cluster.kill(victim);
    const killed = Date.now();
    // the shards on the other masters go on while the victim's replica is not yet promoted
    const othersMs = f.until(
      'the other shards checked after the kill',
      async () => (await checkedOnShards(cluster.endpoint, f, [0, 2], killed + 200)) === others.length,
      30_000,
    );
    const promotedMs = f.until(
      'a replica promoted',
      async () =>
        (await slotOwner(cluster.endpoint, sentinel).then(addressOf, () => addressOf(victim))) !== addressOf(victim),
      30_000,
    );
    const [othersAfter, promotedAfter] = await Promise.all([othersMs, promotedMs]);
    expect(othersAfter).toBeLessThan(promotedAfter);
    const promoted = killed + promotedAfter;
    const allMs =
      (await f.until(
        'every consumer checked after the promotion',
        async () => (await checkedSince(f, promoted)) === f.consumers.length,
        30_000,
      )) + promotedAfter;
    const load = (await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `[cluster shards failover] ${addressOf(victim)} (shard 1's master) killed; the other shards' ${others.length} consumers all checked ${othersAfter} ms after the kill; ` +
        `replica serving after ${promotedAfter} ms; every consumer checked ${allMs} ms after the kill; lost 0; load ${load}`,
    );
    await f.until('status healthy', async () => (await f.status()).healthy);
    const since = f.logs.filter((l) => (l.time as number) >= killed);
    expect(
      since.filter(
        (l) => l.msg.startsWith(`the queue's Redis node ${addressOf(victim)}`) && l.msg.includes('does not answer'),
      ),
    ).toHaveLength(1);
    expect(since.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
  }, 120_000);
});
