/**
 * The transitions a run's own steps make, as a consumer's history keeps them: what a run that
 * writes no record (a quiet heal) tells the timeline, the metrics and the log. Nothing here is
 * written by hand: each entry is a step of the chart, marked where the record would mark it. A
 * state entered to check (`checking`) is not marked: a check writes nothing before it, and its
 * result says where the consumer goes; nor is a step that stays in the state last marked.
 */
import type { ConsumerStateName } from '../machines/consumer-machine.js';
import type { EffectType, PersistedConsumer } from '../machines/machine-step.js';
import type { HistoryEntry } from '../src/store/consumer-record.js';
import { causeAfter, nodeOf, type TransitionCause } from '../src/store/transition-cause.js';

export class RunTrail {
  private readonly marked: HistoryEntry[] = [];
  private node: string | undefined;

  constructor(
    /** The state the run started from (its ticket's). */
    private last: ConsumerStateName,
    /** Who causes the run's first transition (`src/store/transition-cause.ts`). */
    private cause: TransitionCause,
  ) {}

  /** The transitions marked so far, in order. */
  get entries(): readonly HistoryEntry[] {
    return this.marked;
  }

  /** The node(s) a check found not holding the consumer: named in the transitions marked from now on. */
  concerns(node: string): void {
    this.node = nodeOf(node);
  }

  /**
   * A step of the chart, taken now (to `consumer`, asking for `effect`): marked when it moved the consumer to another
   * state it rests or acts in.
   */
  mark(consumer: PersistedConsumer, effect: EffectType | undefined, clock: { now: () => Date }): void {
    const to = consumer.state;
    if (to === this.last || effect === 'check') return;
    this.marked.push({
      at: clock.now(),
      from: this.last,
      to,
      reason: consumer.context.reason,
      by: this.cause,
      ...(this.node !== undefined ? { node: this.node } : {}),
    });
    this.cause = causeAfter(this.cause, to);
    this.last = to;
  }
}
