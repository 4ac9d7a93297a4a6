/**
 * A consumer's recent transitions, as its page lists them: its record's history and the heals its
 * record was not told of. A heal that restores what the record says was applied writes no record
 * (the record is written when what is applied changes; such a heal is an event): its two
 * transitions (`held → lost`, `lost → held`) live in the provider's timeline only, and are listed
 * from there; a transition both hold is listed once.
 */
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import type { TimelineEvent } from '../queue/timeline-event.js';
import type { ConsumerRecord, HistoryEntry } from '../store/consumer-record.js';

/** The state the record says the consumer was in at `ms`: the last transition's before it, else its state now. */
function stateAt(record: Pick<ConsumerRecord, 'history' | 'machine'>, ms: number): ConsumerStateName {
  return record.history.findLast((h) => h.at.getTime() <= ms)?.to ?? record.machine.state;
}

/** Newest first: the record's transitions, and those of its timeline events that the record does not hold. */
export function recentTransitions(
  record: Pick<ConsumerRecord, 'history' | 'machine'>,
  events: readonly TimelineEvent[] | null,
): HistoryEntry[] {
  const recorded = new Set(record.history.map((h) => `${h.at.getTime()} ${h.to}`));
  const unrecorded = (events ?? [])
    .filter((e) => e.kind !== 'brake' && !recorded.has(`${e.at} ${e.state}`))
    .map((e): HistoryEntry => ({
      at: new Date(e.at),
      // as the event says; else: a quiet heal leaves the record in the served state it was lost from
      from: e.from ?? (e.kind === 'healed' ? 'lost' : stateAt(record, e.at)),
      to: e.state,
      reason: e.reason,
      ...(e.by !== undefined ? { by: e.by } : {}),
      ...(e.node !== undefined ? { node: e.node } : {}),
    }));
  return [...record.history, ...unrecorded].sort((a, b) => b.at.getTime() - a.at.getTime());
}
