/**
 * A consumer's recent transitions, as its page lists them: its record's history and the heals its
 * record was not told of. A heal that restores what the record says was applied writes no record
 * (DESIGN rule 3): its two transitions (`held → lost`, `lost → held`) live in the provider's
 * timeline only, and are listed from there; a transition both hold is listed once.
 */
import type { TimelineEvent } from '../queue/timeline-event.js';
import type { ConsumerRecord, HistoryEntry } from '../store/consumer-record.js';

/** Newest first: the record's transitions, and those of its timeline events that the record does not hold. */
export function recentTransitions(record: Pick<ConsumerRecord, 'history' | 'machine'>, events: readonly TimelineEvent[] | null): HistoryEntry[] {
  const recorded = new Set(record.history.map((h) => `${h.at.getTime()} ${h.to}`));
  const unrecorded = (events ?? [])
    .filter((e) => e.kind !== 'brake' && !recorded.has(`${e.at} ${e.state}`))
    .map((e): HistoryEntry => ({
      at: new Date(e.at),
      // a quiet heal leaves the record in the served state it was lost from
      from: e.kind === 'healed' ? 'lost' : record.machine.state,
      to: e.state,
      reason: e.reason,
    }));
  return [...record.history, ...unrecorded].sort((a, b) => b.at.getTime() - a.at.getTime());
}
