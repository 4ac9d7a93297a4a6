/**
 * What a consumer's run hands its persistence edge as the machine rests (`consumer-edge.ts`): one
 * value per run, which says what is written (the record), what is only noted (the check memo, the
 * brief, the timeline, the metrics, the log) and the next wait. A value rather than calls, so
 * that the edge can be handed the outcomes of a round together.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { ConsumerSnapshot } from '../machines/machine-step.js';
import type { Logger } from '../src/logging/logger.js';
import type { Asked, CheckMemo } from '../src/queue/coordination.js';
import type { HistoryEntry } from '../src/store/consumer-record.js';
import type { Found, JobOutcome } from './job-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';
import type { RecordDraft } from './record-draft.js';

/** What a run's checks learned: noted at the lock's release, and counted by the round that ran it. */
export interface Learned {
  memo?: CheckMemo | undefined;
  asked?: Asked;
  /** What the run's last check found, for the round that ran it to count. */
  found?: Found;
}

/** The consumer an outcome is about (`log`, where the edge says something: the consumer's logger). */
interface About {
  key: string;
  provider: ProviderRuntime;
}

export type RunOutcome = About &
  (
    | /** A routine check on the ticket changed nothing durable: nothing written; the same wait again at `at`. */
      { kind: 'unchanged'; at: Date } /**
       * A heal of what the record says was applied, on the ticket (rule 3 of docs/architecture.md: the record is durable): nothing written; noted (the
       * timeline, the metrics, the log) as the chart's steps marked it (`trail`), `found` its check's finding; the
       * same wait again at `at`.
       */
    | { kind: 'healed'; at: Date; trail: readonly HistoryEntry[]; found: ConsumerEvent; log: Logger } /**
     * The machine rests on the record: written if anything durable changed (then its wait scheduled), else its
     * revision remembered; `sameWait`: a wait's job at the record's revision, which runs again at the wait asked for.
     */
    | {
        kind: 'rested';
        draft: RecordDraft;
        snapshot: ConsumerSnapshot;
        /** The revision the queue's Redis told as the lock was claimed. */
        claimedRev: number | null;
        sameWait: boolean;
      } /** The consumer is removed: its record deleted; `leftBehind`: why its login stays on the backend, if it does. */
    | {
        kind: 'removed';
        draft: RecordDraft;
        leftBehind: string | undefined;
        log: Logger;
      } /** A removal found no record: its time marked, so that no spec read before it makes the record again. */
    | {
        kind: 'marked';
        at: number;
      } /** Nothing to persist: the job's outcome as it is (stale, absent, busy, the store down…). */
    | { kind: 'stopped'; job: JobOutcome }
  );

/** What a check's result found, for the round to count. */
function foundOf(event: ConsumerEvent): Found | undefined {
  switch (event.type) {
    case 'HELD':
      return 'held';
    case 'CHECK_FAILED':
      return 'could-not-ask';
    case 'NOT_HELD':
    case 'NOT_APPLIED':
    case 'CHANGED':
      return 'lost';
    default:
      return undefined;
  }
}

/** Whether a check's result asked the backend, for the lock's release. */
function askedOf(event: ConsumerEvent): Asked {
  if (event.type === 'CHECK_FAILED') return 'could-not-ask';
  return event.type === 'HELD' || event.type === 'NOT_HELD' ? 'asked' : undefined;
}

/** What `learned` becomes with a check's `memo` and result `event`: found not held, then held: healed. */
export function learn(learned: Learned, memo: CheckMemo | undefined, event: ConsumerEvent): void {
  learned.memo = memo ?? learned.memo;
  learned.asked = askedOf(event) ?? learned.asked;
  const found = foundOf(event);
  if (found) learned.found = found === 'held' && learned.found === 'lost' ? 'healed' : found;
}
