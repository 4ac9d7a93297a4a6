/**
 * A routine check: a consumer's wait ends, and the job carries a current ticket (its revision is
 * the one the queue's Redis remembers). The machine runs on the ticket, the check is
 * performed, and when the machine's persisted state did not change the job is simply run
 * again after the next wait: no store read, no store write. Anything else is handed back to
 * the caller with the steps taken (the wait's end, the check's result), to be carried on
 * against the record without stepping them again.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import {
  restore,
  samePersisted,
  step,
  persist,
  waitEnded,
  type PersistedConsumer,
  type Step,
  type Wait,
} from '../machines/machine-step.js';
import { keepStep, keptStep, persistedStep } from '../machines/step-memo.js';
import type { CheckMemo } from '../src/queue/coordination.js';
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';
import type { LastCheck } from '../src/store/consumer-record.js';
import { decodeMachine } from '../src/store/record-codec.js';
import type { CheckResult, Effects } from './effects.js';
import type { ProviderRuntime } from './provider-runtime.js';

export type WaitJob = Extract<ConsumerJobData, { kind: 'timer' }>;

/**
 * The steps a routine check took on the ticket, which is the record at the job's revision: carried
 * on against the record from there, so that no event is stepped twice.
 */
export interface Taken {
  /** The consumer the steps started from (the ticket's); used only if the record still holds it. */
  from: PersistedConsumer;
  /** The wait's end. */
  ended: Step;
  /**
   * The check the wait's end asked for, as performed, and the machine's step on its result;
   * `said`: what the step says was said already, and `performed`: the result of the effect it
   * asked for, performed already (by a heal that did not hold: `quiet-heal.ts`).
   */
  checked?: {
    event: ConsumerEvent;
    lastCheck: LastCheck | undefined;
    step: Step;
    said?: true;
    performed?: ConsumerEvent;
    secret?: () => string;
  };
}

export type RoutineOutcome =
  /** Nothing durable changed: run this job again at `again`. */
  | { kind: 'again'; again: Date; event: ConsumerEvent; memo: CheckMemo | undefined }
  /** The check changed the machine, or the wait leads to another effect: carry on against the record. */
  | { kind: 'taken'; taken: Taken; memo?: CheckMemo | undefined }
  /** The ticket cannot be read: go by the record. */
  | { kind: 'unreadable' };

/** A routine check's outcome, its ticket read. */
export type Checked = Exclude<RoutineOutcome, { kind: 'unreadable' }>;

/** The outcome of a check as the record and the status keep it. */
export function lastCheckOf(event: ConsumerEvent, at: Date): LastCheck | undefined {
  switch (event.type) {
    case 'HELD':
      return { at, outcome: 'held', detail: null };
    case 'NOT_HELD':
      return {
        at,
        outcome: 'not-held',
        detail: `${event.reason}${event.node === undefined ? '' : ` on ${event.node}`}: ${event.detail}`,
      };
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

/**
 * What a check learned, to keep in the queue's Redis; undefined when it learned nothing of the backend (a secret could
 * not be read).
 */
export function memoOf(result: CheckResult, rev: number, previous: CheckMemo | null, at: Date): CheckMemo | undefined {
  const check = lastCheckOf(result.event, at);
  if (!check) return undefined;
  const deepAt = result.deep ? at.getTime() : (previous?.deepAt ?? null);
  return { at: at.getTime(), outcome: check.outcome, detail: check.detail, rev, deepAt };
}

export async function routineCheck(
  job: WaitJob,
  provider: ProviderRuntime,
  memo: CheckMemo | null,
  effects: Effects,
  now: () => Date,
): Promise<RoutineOutcome> {
  const { machine } = provider;
  const read = decodeMachine(job.ticket.machine);
  if (!('consumer' in read)) return { kind: 'unreadable' };
  const from = read.consumer;
  // the chart's answers, kept (`machines/step-memo.ts`); each event stepped at most once, when not answered before
  const waitEnd = waitEnded(job.wait, from.state);
  let stepped: Step | undefined;
  const ended = () => (stepped ??= step(machine, restore(machine, from), waitEnd));
  const ending = keptStep(machine, from, waitEnd) ?? keptFrom(machine, from, waitEnd, ended());
  if (ending.effect !== 'check') return { kind: 'taken', taken: { from, ended: ended() } };

  const result = await effects.check({
    key: job.key,
    provider,
    spec: job.ticket.spec,
    context: ending.consumer.context,
    appliedAt: job.ticket.appliedAt,
    memo,
  });
  const at = now();
  const answer = keptStep(machine, ending.consumer, result.event);
  if (answer?.wait && rests(answer, answer.consumer, from)) return again(answer.wait, result, job.rev, memo, at);
  return answered(machine, job.rev, from, ended(), result, memo, at);
}

/** `stepped`, kept as the chart's answer to `event` for `from`. */
function keptFrom(machine: ProviderRuntime['machine'], from: PersistedConsumer, event: ConsumerEvent, stepped: Step) {
  keepStep(machine, from, event, stepped);
  return persistedStep(stepped);
}

/** Whether a check's step, leading to `after`, leaves the consumer as it was `from`, waiting: nothing durable changed. */
function rests(answer: Pick<Step, 'effect' | 'said' | 'wait'>, after: PersistedConsumer, from: PersistedConsumer) {
  return !answer.effect && answer.said.length === 0 && samePersisted(after, from);
}

function again(wait: Wait, result: CheckResult, rev: number, memo: CheckMemo | null, at: Date): Checked {
  const learned = memoOf(result, rev, memo, at);
  return { kind: 'again', again: new Date(at.getTime() + wait.ms), event: result.event, memo: learned };
}

/**
 * The machine's step on a check's result (the routine check's, or a heal's confirmation): run
 * again at the next wait when nothing durable changed, else the steps taken, to carry on.
 */
export function answered(
  machine: ProviderRuntime['machine'],
  rev: number,
  from: PersistedConsumer,
  ended: Step,
  result: CheckResult,
  memo: CheckMemo | null,
  at: Date,
): Checked {
  const answer = step(machine, ended.snapshot, result.event);
  keepStep(machine, persist(ended.snapshot), result.event, answer);
  if (answer.wait && rests(answer, persist(answer.snapshot), from)) return again(answer.wait, result, rev, memo, at);
  const learned = memoOf(result, rev, memo, at);
  const checked = {
    event: result.event,
    lastCheck: lastCheckOf(result.event, at),
    step: answer,
    ...(result.secret ? { secret: result.secret } : {}),
  };
  return { kind: 'taken', taken: { from, ended, checked }, memo: learned };
}
