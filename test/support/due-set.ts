/**
 * What the due set (`src/schedule/due-waits.ts`) holds, read and changed by hand as a test needs: by each shard's prefix.
 */
import type { Redis } from 'ioredis';
import { holdfastPrefix } from '../../src/queue/coordination.js';
import { coordinationKeys } from '../../src/queue/coordination/keys.js';
import { takenWait, type TakenWait } from '../../src/schedule/due-waits.js';

/** The due set's keys under the queue prefix `prefix`, from the one key table. */
function dueKeys(prefix: string) {
  const keys = coordinationKeys(holdfastPrefix(prefix));
  return { due: keys.due, revs: keys.dueRevs, waits: keys.dueWaits };
}

/**
 * The consumers whose waits each shard's due set holds, shard `i` at index `i` (`prefixes` as `shardPrefixes` gives
 * them).
 */
export function dueWaitsPerShard(redis: Redis, prefixes: readonly string[]): Promise<string[][]> {
  return Promise.all(prefixes.map((prefix) => redis.zrange(dueKeys(prefix).due, 0, -1)));
}

/** Removes `key`'s wait from the due set under `prefix`, as a queue that lost it would; whether there was one. */
export async function dropDueWait(redis: Redis, prefix: string, key: string): Promise<boolean> {
  const { due, revs, waits } = dueKeys(prefix);
  const replies = await redis.multi().zrem(due, key).hdel(revs, key).hdel(waits, key).exec();
  return replies?.[0]?.[1] === 1;
}

/** Every wait's data in the due set under `prefix`, as stored (what a secret must never be found in). */
export async function dueWaitData(redis: Redis, prefix: string): Promise<string> {
  return Object.values(await redis.hgetall(dueKeys(prefix).waits)).join('\n');
}

/** How many waits the due set under `prefix` holds, and how many of them are due by now (not taken yet). */
export async function dueCounts(redis: Redis, prefix: string): Promise<{ scheduled: number; due: number }> {
  const { due } = dueKeys(prefix);
  const [scheduled, overdue] = await Promise.all([redis.zcard(due), redis.zcount(due, '-inf', Date.now())]);
  return { scheduled, due: overdue };
}

/**
 * Up to `limit` of the due set's waits under `prefix`, as the wait jobs they stand for (real tickets under the real
 * seal).
 */
export async function dueWaitJobs(redis: Redis, prefix: string, limit: number): Promise<Array<TakenWait['job']>> {
  const { revs, waits } = dueKeys(prefix);
  const [byKey, texts] = await Promise.all([redis.hgetall(revs), redis.hgetall(waits)]);
  return Object.entries(byKey)
    .slice(0, limit)
    .map(([key, rev]) => takenWait({ key, rev, text: texts[key] ?? '', dueAt: 0 }).job);
}
