/**
 * What a round's arrays (`round-checks.ts`, `round-heals.ts`) work with, and how each of its waits is told to have
 * ended: one file both import, so that neither imports the other's.
 */
import type { BatchLocks, Released } from '../src/queue/coordination.js';
import type { JobDeps } from './consumer-job.js';
import { againNowIfSuspect, type JobOutcome } from './job-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';

export interface RoundCheckDeps extends JobDeps {
  coordination: JobDeps['coordination'] & { readonly locks: JobDeps['coordination']['locks'] & BatchLocks };
}

/** What became of one wait of the round: its job's outcome, or what its run threw (handed to the queue). */
export type Ran = { outcome: JobOutcome } | { error: unknown };

/** Told of each wait as it ends, by its place in the round. */
export type RanEach = (at: number, ran: Ran) => void;

/**
 * How a wait ends once its lock is released (`released`): its provider's count of consumers asked about kept (the pace
 * of its deep checks), and its outcome due again at once when its consumer is still suspect (asked before its
 * provider's last node event).
 */
export function afterRelease(released: Released | undefined, provider: ProviderRuntime, ran: Ran, now: Date): Ran {
  if (released?.askedAbout !== undefined) provider.fleet.consumers = released.askedAbout;
  return released?.suspect && 'outcome' in ran ? { outcome: againNowIfSuspect(ran.outcome, true, now) } : ran;
}
