/**
 * Whether consumers' checks are still in the queue (delayed, waiting or running): the status's
 * way to tell a check that waits behind a backlog from one nobody will run (its job lost).
 * Read from BullMQ's own keys in O(1) each, however long the backlog: the job's hash exists
 * and the job is not among the failed (`getJobState` would scan the waiting list for each).
 */
import type { Redis } from 'ioredis';
import { waitJobId } from './consumer-queue.js';
import { byShard } from './shard-of.js';

export interface QueuedChecks {
  /** For each `[consumer key, revision]`, whether its wait's job at that revision is in the queue. */
  queued(waits: ReadonlyArray<readonly [key: string, rev: number]>): Promise<boolean[]>;
}

/** Where a sharded queue's keys are: its number of shards, and BullMQ's key of `type` in shard `shard` (`Queue.toKey`). */
export interface QueueKeys {
  shards: number;
  toKey: (shard: number, type: string) => string;
}

/**
 * Asks `redis` about the jobs of the queue `keys` describes: one pipeline per shard, since the
 * keys of one pipeline must share a Redis Cluster node.
 */
export function queuedChecks(redis: Pick<Redis, 'pipeline'>, keys: QueueKeys): QueuedChecks {
  return {
    async queued(waits) {
      const answers = new Array<boolean>(waits.length).fill(false);
      const all = waits.map((_, i) => i);
      await Promise.all([...byShard(all, (i) => waits[i]![0], keys.shards)].map(async ([shard, indexes]) => {
        const pipeline = redis.pipeline();
        for (const i of indexes) {
          const id = waitJobId(waits[i]![0], waits[i]![1]);
          pipeline.exists(keys.toKey(shard, id)).zscore(keys.toKey(shard, 'failed'), id);
        }
        const replies = (await pipeline.exec()) ?? [];
        indexes.forEach((i, n) => (answers[i] = replies[2 * n]?.[1] === 1 && replies[2 * n + 1]?.[1] === null));
      }));
      return answers;
    },
  };
}
