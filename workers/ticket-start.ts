/**
 * Where a routine check on its ticket starts: the consumer the ticket holds, the event its wait's
 * end is, and the chart's kept answers (`machines/step-memo.ts`) to that end and to the check
 * finding it held. A round hands the same frozen job for a wait taken again with the same text
 * (`src/schedule/known-waits.ts`), and for the same job and the same chart these are the same every
 * time (the chart is pure and its delays have no randomness: `machines/delays.ts`), so they are
 * worked out once per job rather than at every check: decoding the ticket and making the kept
 * answers' keys (the whole context as text, twice) was a part of every routine check's cost and
 * garbage. Only what the chart returned is kept, frozen; a job not frozen is worked out each time.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { ConsumerMachine } from '../machines/consumer-machine.js';
import { samePersisted, waitEnded, type PersistedConsumer, type Wait } from '../machines/machine-step.js';
import { keptStep, type PersistedStep } from '../machines/step-memo.js';
import { decodeMachine } from '../src/store/record-codec.js';
import { deepFreeze } from '../src/text/deep-freeze.js';
import type { WaitJob } from './wait-job.js';

export interface TicketStart {
  /** The consumer as the ticket holds it. */
  readonly from: PersistedConsumer;
  /** What the end of the job's wait is to the chart. */
  readonly waitEnd: ConsumerEvent;
  /** The chart's kept answer to `waitEnd` for `from`; undefined when it has none (stepped for real). */
  readonly ending: PersistedStep | undefined;
}

interface Known extends TicketStart {
  machine: ConsumerMachine;
  /** The kept answer to a plain `HELD` after {@link TicketStart.ending}, once the chart gave it. */
  held?: PersistedStep;
}

const known = new WeakMap<WaitJob, Known>();

/** Where a check on `job`'s ticket starts under `machine`; undefined when the ticket's machine does not read. */
export function ticketStart(machine: ConsumerMachine, job: WaitJob): TicketStart | undefined {
  const kept = known.get(job);
  if (kept !== undefined && kept.machine === machine) return kept;
  const read = decodeMachine(job.ticket.machine);
  if (!('consumer' in read)) return undefined;
  const from = read.consumer;
  const waitEnd = waitEnded(job.wait, from.state);
  const ending = keptStep(machine, from, waitEnd);
  if (!Object.isFrozen(job) || ending === undefined) return { from, waitEnd, ending };
  const start: Known = { machine, from: deepFreeze(from), waitEnd: deepFreeze(waitEnd), ending: deepFreeze(ending) };
  known.set(job, start);
  return start;
}

/** The chart's kept answer to `found` after `start`'s ending (a plain `HELD`'s kept with `start`); undefined: none. */
export function foundAnswer(
  machine: ConsumerMachine,
  start: TicketStart,
  found: ConsumerEvent,
): PersistedStep | undefined {
  const { ending } = start;
  if (ending === undefined) return undefined;
  // kept only with a start that is kept itself (a frozen job's), and only a plain HELD's: what a routine check finds
  const kept = (start as Partial<Known>).machine === machine ? (start as Known) : undefined;
  const plain = kept !== undefined && found.type === 'HELD' && Object.keys(found).length === 1;
  if (plain && kept.held !== undefined) return kept.held;
  const answer = keptStep(machine, ending.consumer, found);
  if (plain && answer !== undefined) kept.held = deepFreeze(answer);
  return answer;
}

/**
 * Whether a check's kept answer changes nothing durable: no effect, nothing said, a wait asked, and the consumer as
 * the ticket holds it (`from`). Such a check rests `unchanged`, its wait due again.
 */
export function restsUnchanged(
  answer: PersistedStep,
  from: PersistedConsumer,
): answer is PersistedStep & { wait: Wait } {
  return (
    !answer.effect && answer.said.length === 0 && answer.wait !== undefined && samePersisted(answer.consumer, from)
  );
}
