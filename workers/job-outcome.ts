/**
 * What became of a job. "Try later" is one outcome, whatever its reason: the worker puts the job
 * back, delayed, without using an attempt. A job that throws failed for what retries cannot fix.
 */
import type { CheckTicket } from '../src/schedule/consumer-queue.js';
import { putBackAt } from './put-back.js';

/** Why a job is put back. */
export type Later =
  /** A routine check found nothing durable changed: the same job runs again after the next wait. */
  | 'again'
  /** Another worker acts on the consumer (or did, and its effect's deadline is not over). */
  | 'busy'
  /** The job lost its lock, or its write lost a compare-and-swap. */
  | 'conflict'
  /** The record store does not answer: nothing is done from a record that may be stale. */
  | 'store-down';

/**
 * What a run's check found, for the round that ran it to count: held; healed (found not held and
 * applied again, confirmed, in the same run); lost (found not held or changed, carried on against
 * the record); could-not-ask.
 */
export type Found = 'held' | 'healed' | 'lost' | 'could-not-ask';

export type JobOutcome = (
  | { kind: 'done' }
  /**
   * Put back until `at`; `error`: what said so, for the debug log; `ticket`: for `again` after
   * the record was read, the record's ticket, which the wait carries from now on (without it,
   * the routine check ran on the job's own, sealed ticket).
   */
  | { kind: 'later'; at: Date; why: Later; error?: unknown; ticket?: CheckTicket }
  | { kind: 'stale' | 'absent' | 'unknown-provider' }
  /** Not written by holdfast: dropped (see `job-trust.ts`). */
  | { kind: 'rejected' }
) & { found?: Found };

/** How long a job waits, put back, before it tries again (jittered: up to twice this). */
const RETRY_MS: Record<Exclude<Later, 'again'>, number> = { busy: 250, conflict: 250, 'store-down': 1000 };

/** The same wait again at `at`, carrying `ticket` when the record was read (see {@link JobOutcome}). */
export function again(at: Date, ticket?: CheckTicket): JobOutcome {
  return { kind: 'later', at, why: 'again', ...(ticket ? { ticket } : {}) };
}

/**
 * `outcome`, its consumer still suspect after its run (the run asked before its provider's last node event): a wait due
 * again after its interval is due again at `now` instead, asked again at once as a suspect is; any other is left as it
 * is (put back for a moment already, or done with: a new wait scheduled, brought forward by the release).
 */
export function againNowIfSuspect(outcome: JobOutcome, suspect: boolean, now: Date): JobOutcome {
  return suspect && outcome.kind === 'later' && outcome.why === 'again' && outcome.at > now
    ? { ...outcome, at: now }
    : outcome;
}

/** Put back for its reason's retry time, jittered, or until `until` when that is later than `now`. */
export function retryLater(
  why: Exclude<Later, 'again'>,
  now: Date,
  options: { until?: Date | null; error?: unknown } = {},
): JobOutcome {
  const { until, error } = options;
  const at = until && until > now ? until.getTime() : putBackAt(now.getTime(), RETRY_MS[why]);
  return { kind: 'later', at: new Date(at), why, ...(error === undefined ? {} : { error }) };
}
