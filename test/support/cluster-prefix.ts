/**
 * A fresh queue prefix whose shards are served by as many distinct masters of a test cluster:
 * which master serves a slot is the cluster's choice, so random hash tags are tried until one fits.
 */
import { randomBytes } from 'node:crypto';
import { shardPrefixes } from '../../src/config/shard-prefixes.js';
import { holdfastPrefix } from '../../src/queue/coordination.js';
import { addressOf, slotOwner, type RedisClusterEndpoint } from '../backends/redis-cluster.js';

export async function prefixOverMasters(cluster: RedisClusterEndpoint, shards: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const prefix = `{hs${randomBytes(3).toString('hex')}}`;
    const owners = await Promise.all(
      shardPrefixes(prefix, shards).map(async (p) => addressOf(await slotOwner(cluster, holdfastPrefix(p)))),
    );
    if (new Set(owners).size === shards) return prefix;
  }
  throw new Error(`no prefix found whose ${shards} shards land on ${shards} masters`);
}
