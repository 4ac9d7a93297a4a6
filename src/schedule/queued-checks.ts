/**
 * Whether consumers' checks are still in the queue (in the due set, or a job delayed, waiting or
 * running): the status's way to tell a check that waits behind a backlog from one nobody will
 * run (its wait lost). Read in O(1) each, however long the backlog: the revision the due set holds
 * for the consumer is the record's (or later), or BullMQ's job hash exists and the job is not among the
 * failed (`getJobState` would scan the waiting list for each).
 */
import type { Redis } from 'ioredis';
import { shardPrefixes } from '../config/shard-prefixes.js';
import { dueRevsKey, holdfastPrefix } from '../queue/coordination.js';
import { waitJobId } from './wait-job-id.js';
import { byShard } from '../queue/shard-of.js';

export interface QueuedChecks {
  /** For each `[consumer key, revision]`, whether its wait's job at that revision is in the queue. */
  queued(waits: ReadonlyArray<readonly [key: string, rev: number]>): Promise<boolean[]>;
}

/**
 * Where a sharded queue's keys are: its number of shards, BullMQ's key of `type` in shard `shard` (`Queue.toKey`), and
 * the due set's revisions there.
 */
export interface QueueKeys {
  shards: number;
  toKey: (shard: number, type: string) => string;
  dueRevs: (shard: number) => string;
}

/**
 * The keys of the queue `name` under `prefix` in `shards` shards, as BullMQ names them
 * (`QueueKeys.toKey`: `<prefix>:<name>:<type>`), without loading BullMQ: the status reads them.
 */
export function queueKeysNamed(prefix: string, name: string, shards: number): QueueKeys {
  return queueKeysOf(
    prefix,
    shardPrefixes(prefix, shards).map((shard) => ({ toKey: (type: string) => `${shard}:${name}:${type}` })),
  );
}

/** The keys of the queue under `prefix` whose shards' BullMQ queues are `queues` (shard `i` at index `i`). */
export function queueKeysOf(prefix: string, queues: ReadonlyArray<{ toKey(type: string): string }>): QueueKeys {
  const due = shardPrefixes(prefix, queues.length).map((shard) => dueRevsKey(holdfastPrefix(shard)));
  return { shards: queues.length, toKey: (shard, type) => queues[shard]!.toKey(type), dueRevs: (shard) => due[shard]! };
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
      await Promise.all(
        [...byShard(all, (i) => waits[i]![0], keys.shards)].map(async ([shard, indexes]) => {
          const pipeline = redis.pipeline();
          for (const i of indexes) {
            const id = waitJobId(waits[i]![0], waits[i]![1]);
            pipeline
              .exists(keys.toKey(shard, id))
              .zscore(keys.toKey(shard, 'failed'), id)
              .hget(keys.dueRevs(shard), waits[i]![0]);
          }
          const replies = (await pipeline.exec()) ?? [];
          indexes.forEach((i, n) => {
            const [job, failed, due] = [replies[3 * n]?.[1], replies[3 * n + 1]?.[1], replies[3 * n + 2]?.[1]];
            answers[i] = (job === 1 && failed === null) || (typeof due === 'string' && Number(due) >= waits[i]![1]);
          });
        }),
      );
      return answers;
    },
  };
}
