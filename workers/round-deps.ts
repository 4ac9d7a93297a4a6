/**
 * What a round's arrays (`round-checks.ts`, `round-heals.ts`) work with, and how each of its waits is told to have
 * ended: one file both import, so that neither imports the other's.
 */
import type { BatchLocks } from '../src/queue/coordination.js';
import type { JobDeps } from './consumer-job.js';
import type { JobOutcome } from './job-outcome.js';

export interface RoundCheckDeps extends JobDeps {
  coordination: JobDeps['coordination'] & { readonly locks: JobDeps['coordination']['locks'] & BatchLocks };
}

/** What became of one wait of the round: its job's outcome, or what its run threw (handed to the queue). */
export type Ran = { outcome: JobOutcome } | { error: unknown };

/** Told of each wait as it ends, by its place in the round. */
export type RanEach = (at: number, ran: Ran) => void;
