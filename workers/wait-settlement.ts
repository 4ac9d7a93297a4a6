/**
 * How a wait's run settles it: one rule, whichever way the wait was run (taken by a round from
 * the due set, `due-rounds.ts`, or as a wait job, `consumer-worker.ts`, where a round hands a
 * wait whose run threw).
 *
 * Due again at the outcome's time when it says "later" (the routine check changed nothing, the
 * consumer was busy, a lock or compare-and-swap was lost, the store does not answer); done with
 * otherwise (the run wrote its record, which scheduled the wait it asked for; or the wait was
 * stale, its consumer absent, its provider unknown, its job rejected). A wait due again carries
 * the record's ticket from now on when the record was read (sealed anew); else the ticket and the
 * seal it was run with (a ticket not judged whole here is never sealed here).
 */
import type { WaitScheduler } from '../src/schedule/due-waits.js';
import type { JobOutcome } from './job-outcome.js';
import type { WaitJob } from './wait-job.js';

/**
 * Settles `job`'s wait by `outcome`; when it is due again (ms), or null. `inDueSet`: whether
 * the wait is in the due set already (taken by a round, which moves it to the time returned);
 * a wait job's wait is put there.
 */
/**
 * A taken wait settled by `outcome` (`inDueSet`, as {@link settleWait}): when it is due again, at once when nothing is to
 * be scheduled (a routine check that changed nothing: no promise of its own), else once scheduled.
 */
export function settleTaken(
  job: WaitJob,
  outcome: JobOutcome,
  due: WaitScheduler,
): number | null | Promise<number | null> {
  if (outcome.kind !== 'later') return null;
  return outcome.ticket ? settleWait(job, outcome, due, true) : outcome.at.getTime();
}

export async function settleWait(
  job: WaitJob,
  outcome: JobOutcome,
  due: WaitScheduler,
  inDueSet: boolean,
): Promise<number | null> {
  if (outcome.kind !== 'later') return null;
  const { key, wait, rev } = job;
  const timer = { wait, rev, dueAt: outcome.at };
  if (outcome.ticket) await due.scheduleWaits([{ key, timer, ticket: outcome.ticket }]);
  else if (!inDueSet) await due.scheduleWaits([{ key, timer, ticket: job.ticket, seal: job.seal }]);
  return outcome.at.getTime();
}
