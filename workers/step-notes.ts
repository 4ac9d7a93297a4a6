/**
 * What a run's steps tell the record: the wait asked for, what to say, what a check found, an
 * apply, who caused it and where. The record's draft takes them as they come (`record-draft.ts`);
 * on a wait's ticket, before the record is read, {@link TicketNotes} keeps them, and hands them to
 * the draft if the record is read after all, so that no step is taken twice.
 */
import type { Wait } from '../machines/machine-step.js';
import type { LastCheck } from '../src/store/consumer-record.js';
import type { TransitionCause } from '../src/store/transition-cause.js';

export interface StepNotes {
  /** The wait a step asked for (null: cancelled; undefined: unchanged). */
  setWait(request: Wait | null | undefined): void;
  /** Something to say once the record says so. */
  say(saying: () => void): void;
  /** What a check found, for the record's last check. */
  checked(check: LastCheck): void;
  /** The node(s) a check found not holding the consumer. */
  concerns(node: string): void;
  /** The spec was applied at `at`. */
  applied(at: Date): void;
  /** Who causes the transitions from now on. */
  causedBy(cause: TransitionCause): void;
}

/** A saying kept on the ticket, and whether it was said there already. */
interface Saying {
  say: () => void;
  said: boolean;
}

/** The notes of steps taken on a wait's ticket, kept in order until the record is read (or never is). */
export class TicketNotes implements StepNotes {
  private readonly kept: Array<(to: StepNotes) => void> = [];
  private readonly sayings: Saying[] = [];

  /** Whether a step said anything (a routine check that changed nothing says nothing). */
  get saysAnything(): boolean {
    return this.sayings.length > 0;
  }

  setWait(request: Wait | null | undefined): void {
    if (request !== undefined) this.kept.push((to) => to.setWait(request));
  }

  say(say: () => void): void {
    const saying: Saying = { say, said: false };
    this.sayings.push(saying);
    this.kept.push((to) => {
      if (!saying.said) to.say(say);
    });
  }

  checked(check: LastCheck): void {
    this.kept.push((to) => to.checked(check));
  }

  concerns(node: string): void {
    this.kept.push((to) => to.concerns(node));
  }

  applied(at: Date): void {
    this.kept.push((to) => to.applied(at));
  }

  causedBy(cause: TransitionCause): void {
    this.kept.push((to) => to.causedBy(cause));
  }

  /** Says now what is not said yet (a heal on the ticket, before its apply): never said again. */
  sayNow(): void {
    for (const saying of this.sayings)
      if (!saying.said) {
        saying.said = true;
        saying.say();
      }
  }

  /** What is not said yet was said by whoever began the heal (`round-heals.ts`): never said again. */
  saidAlready(): void {
    for (const saying of this.sayings) saying.said = true;
  }

  /** Hands what was noted, in order, to the record's draft. */
  replayInto(to: StepNotes): void {
    for (const noted of this.kept) noted(to);
  }
}
