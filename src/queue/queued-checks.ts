/**
 * Whether consumers' checks are still in the queue (delayed, waiting or running): the status's
 * way to tell a check that waits behind a backlog from one nobody will run (its job lost).
 */
import type { Queue } from 'bullmq';
import { waitJobId } from './consumer-queue.js';

export interface QueuedChecks {
  /** For each `[consumer key, revision]`, whether its wait's job at that revision is in the queue. */
  queued(waits: ReadonlyArray<readonly [key: string, rev: number]>): Promise<boolean[]>;
}

/** The states of a job that will still run. */
const PENDING: ReadonlySet<string> = new Set(['delayed', 'waiting', 'prioritized', 'active', 'waiting-children']);

/** Asks BullMQ `queue` (one request per consumer, sent together). */
export function queuedChecks(queue: Pick<Queue, 'getJobState'>): QueuedChecks {
  return {
    queued: (waits) => Promise.all(waits.map(([key, rev]) => queue.getJobState(waitJobId(key, rev)).then((state) => PENDING.has(state)))),
  };
}
