/**
 * Whether consumers' checks are still in the queue (delayed, waiting or running): the status's
 * way to tell a check that waits behind a backlog from one nobody will run (its job lost).
 * Read from BullMQ's own keys in O(1) each, however long the backlog: the job's hash exists
 * and the job is not among the failed (`getJobState` would scan the waiting list for each).
 */
import type { Redis } from 'ioredis';
import { waitJobId } from './consumer-queue.js';

export interface QueuedChecks {
  /** For each `[consumer key, revision]`, whether its wait's job at that revision is in the queue. */
  queued(waits: ReadonlyArray<readonly [key: string, rev: number]>): Promise<boolean[]>;
}

/** Asks `redis` about the jobs of the BullMQ queue whose keys `toKey` makes (`Queue.toKey`). */
export function queuedChecks(redis: Pick<Redis, 'pipeline'>, toKey: (type: string) => string): QueuedChecks {
  return {
    async queued(waits) {
      if (waits.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const [key, rev] of waits) pipeline.exists(toKey(waitJobId(key, rev))).zscore(toKey('failed'), waitJobId(key, rev));
      const replies = (await pipeline.exec()) ?? [];
      return waits.map((_, i) => replies[2 * i]?.[1] === 1 && replies[2 * i + 1]?.[1] === null);
    },
  };
}
