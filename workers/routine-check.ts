/**
 * A routine check: a consumer's wait ends, and the job carries a current ticket (its epoch is
 * the revision the queue's Redis remembers). The machine runs on the ticket, the check is
 * performed, and when the machine's persisted state did not change the job is simply run
 * again after the next wait: no store read, no store write. Anything else is handed back to
 * the caller with the check's result, to be carried on against the record.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { restore, samePersisted, step, persist, waitEnded, type ConsumerSnapshot } from '../machines/machine-step.js';
import type { CheckMemo } from '../src/queue/coordination.js';
import type { ConsumerJobData } from '../src/queue/consumer-queue.js';
import type { LastCheck } from '../src/store/consumer-record.js';
import { decodeMachine } from '../src/store/record-codec.js';
import type { CheckResult, Effects } from './effects.js';
import type { ProviderRuntime } from './provider-runtime.js';

export type TimerJob = Extract<ConsumerJobData, { kind: 'timer' }>;

/** A check already performed, to be fed to the machine in place of performing it again. */
export interface PerformedCheck {
  event: ConsumerEvent;
  lastCheck: LastCheck | undefined;
}

export type RoutineOutcome =
  /** Nothing durable changed: run this job again at `at`. */
  | { again: Date; event: ConsumerEvent; memo: CheckMemo | undefined }
  /** The check changed the machine: carry on against the record with this result. */
  | { performed: PerformedCheck; memo: CheckMemo | undefined }
  /** Not a routine check (the wait leads to another effect): carry on against the record. */
  | { notRoutine: true };

/** The outcome of a check as the record and the status keep it. */
export function lastCheckOf(event: ConsumerEvent, at: Date): LastCheck | undefined {
  switch (event.type) {
    case 'HELD':
      return { at, outcome: 'held', detail: null };
    case 'NOT_HELD':
    case 'NOT_APPLIED':
      return { at, outcome: 'not-held', detail: `${event.reason}: ${event.detail}` };
    case 'CHECK_FAILED':
      return { at, outcome: 'could-not-ask', detail: event.error };
    case 'CHANGED':
      return { at, outcome: 'changed', detail: event.what };
    default:
      return undefined;
  }
}

/** What a check learned, to keep in the queue's Redis; undefined when it learned nothing of the backend (a secret could not be read). */
export function memoOf(result: CheckResult, epoch: number, previous: CheckMemo | null, at: Date): CheckMemo | undefined {
  const check = lastCheckOf(result.event, at);
  if (!check) return undefined;
  const deepAt = result.deep ? at.getTime() : (previous?.deepAt ?? null);
  return { at: at.getTime(), outcome: check.outcome, detail: check.detail, epoch, deepAt };
}

export async function routineCheck(
  job: TimerJob,
  provider: ProviderRuntime,
  memo: CheckMemo | null,
  effects: Effects,
  now: () => Date,
): Promise<RoutineOutcome> {
  const { machine } = provider;
  const read = decodeMachine(job.ticket.machine);
  if (!('consumer' in read)) return { notRoutine: true };
  const snapshot: ConsumerSnapshot = restore(machine, read.consumer);
  const asked = step(machine, snapshot, waitEnded(job.wait, snapshot.value));
  if (asked.effect !== 'check') return { notRoutine: true };

  const result = await effects.check({
    key: job.key,
    provider,
    spec: job.ticket.spec,
    context: asked.snapshot.context,
    appliedAt: job.ticket.appliedAt,
    memo,
  });
  const at = now();
  const learned = memoOf(result, job.epoch, memo, at);
  const answered = step(machine, asked.snapshot, result.event);
  if (!answered.effect && answered.said.length === 0 && answered.wait && samePersisted(persist(answered.snapshot), read.consumer)) {
    return { again: new Date(at.getTime() + answered.wait.ms), event: result.event, memo: learned };
  }
  return { performed: { event: result.event, lastCheck: lastCheckOf(result.event, at) }, memo: learned };
}
