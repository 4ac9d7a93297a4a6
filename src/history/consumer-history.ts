/**
 * A consumer's history as data (`holdfast history`, `GET /consumers/<provider>/<id>/history`):
 * every transition holdfast still keeps, oldest first, with its time, reason, cause and node, and
 * how far back that goes. From what holdfast keeps already, nothing more:
 *
 * - the record's history: its last {@link HISTORY_LENGTH} transitions, each written with the record;
 * - the provider's timeline in the queue's Redis (about the last {@link TIMELINE_CAP} losses, heals
 *   and brakes of all its consumers): the heals a record is not told of (a heal of what the record
 *   says was applied writes no record: the record is written when what is applied changes, not
 *   when a heal restores it) are listed from there
 *   (`recent-transitions.ts`: a transition both hold is listed once);
 * - the provider's node events (its last 50, in the queue's Redis: `SuspectSignals.suspectEvents`): each made every
 *   consumer of the provider then suspect, and is listed as a line `by: node` in the state it found the consumer in
 *   (one entry per event per provider, not one write per consumer).
 *
 * Never a secret: states, reasons (the status's words), causes, nodes and times.
 */
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import { nodeEventWords } from '../adapters/incarnation-words.js';
import { TIMELINE_CAP, type SuspectEvent } from '../queue/coordination.js';
import type { TimelineEvent } from '../queue/timeline-event.js';
import { HISTORY_LENGTH, type ConsumerRecord, type HistoryEntry } from '../store/consumer-record.js';
import type { TransitionCause } from '../store/transition-cause.js';
import { recentTransitions } from './recent-transitions.js';

export interface HistoryLine {
  at: string;
  from: ConsumerStateName;
  to: ConsumerStateName;
  reason: string | null;
  /** Who caused it; null for a transition written before holdfast kept causes. */
  by: TransitionCause | null;
  /** On a backend of several nodes, the node(s) it concerned; null otherwise. */
  node: string | null;
  /** Whether the record holds it (false: only the provider's timeline does, a heal not written). */
  recorded: boolean;
}

/** How far back the history goes, and why there. */
export interface HistoryReach {
  /** How many transitions the record keeps (the newest). */
  recordKeeps: number;
  /** When the record was made (the consumer first declared, or declared again after a removal). */
  recordSince: string;
  /** Whether older transitions than the record keeps are gone (it holds as many as it keeps). */
  recordFull: boolean;
  /** The time of the oldest transition the record still holds; null when it holds none. */
  recordOldest: string | null;
  /** About how many events the provider's timeline keeps (all its consumers'). */
  timelineKeeps: number;
  /** The time of the oldest event the provider's timeline holds now; null when it holds none. */
  timelineOldest: string | null;
  /** Whether the timeline could be read (false: the queue's Redis did not answer in time). */
  timelineRead: boolean;
  /** `--since`/`?since=`: transitions before this are left out; null: none left out. */
  since: string | null;
  /** All of the above in one sentence. */
  words: string;
}

export interface ConsumerHistory {
  consumer: string;
  state: ConsumerStateName;
  stateSince: string;
  reach: HistoryReach;
  /** Oldest first. */
  transitions: HistoryLine[];
}

const iso = (ms: number) => new Date(ms).toISOString();

function line(entry: HistoryEntry, recorded: boolean): HistoryLine {
  return {
    at: entry.at.toISOString(),
    from: entry.from,
    to: entry.to,
    reason: entry.reason,
    by: entry.by ?? null,
    node: entry.node ?? null,
    recorded,
  };
}

/**
 * The provider's node events since the record was made, each as a line `by: node` in the state the consumer was in
 * then (the last of `recent`, newest first, before it; else its state now): made suspect, asked at once.
 */
function suspectedBy(
  nodeEvents: readonly SuspectEvent[],
  recent: readonly HistoryEntry[],
  record: ConsumerRecord,
): HistoryEntry[] {
  return nodeEvents.flatMap((e) => {
    const at = Date.parse(e.at);
    if (!Number.isFinite(at) || at < record.createdAt.getTime()) return [];
    const state = recent.find((h) => h.at.getTime() <= at)?.to ?? record.machine.state;
    const reason = `${e.node} ${nodeEventWords(e.why, e.at)}: suspect, asked at once`;
    return [{ at: new Date(at), from: state, to: state, reason, by: 'node' as const, node: e.node }];
  });
}

/** The reach in words: what each source keeps and from when. */
function reachWords(r: Omit<HistoryReach, 'words'>, provider: string): string {
  const record = r.recordFull
    ? `the record keeps its last ${r.recordKeeps} transitions: older ones are gone, the oldest kept is from ${r.recordOldest}`
    : `the record keeps its last ${r.recordKeeps} transitions: it holds all it made since ${r.recordSince}`;
  const timeline = !r.timelineRead
    ? `the ${provider} timeline (heals not written to the record) could not be read from the queue's Redis`
    : `heals not written to the record come from the ${provider} timeline in the queue's Redis (about its last ${r.timelineKeeps} losses, heals and brakes), ${r.timelineOldest ? `which goes back to ${r.timelineOldest}` : 'empty now'}`;
  return `${record}; ${timeline}${r.since ? `; only transitions since ${r.since} are listed` : ''}`;
}

/**
 * The history of `record` (readable), from the record and its provider's timeline `events` (all
 * the provider's, oldest first; null: not read), transitions before `sinceMs` left out.
 */
export function consumerHistory(
  record: ConsumerRecord,
  events: readonly TimelineEvent[] | null,
  sinceMs: number | null,
  nodeEvents: readonly SuspectEvent[] = [],
): ConsumerHistory {
  const made = record.createdAt.getTime();
  // a consumer removed and declared again: its earlier life's events are not this record's
  const own = events?.filter((e) => e.key === record._id && e.at >= made) ?? null;
  const written = new Map<HistoryEntry, number>(record.history.map((h, i) => [h, i]));
  // oldest first; two of the same millisecond in the record's order
  const rank = (h: HistoryEntry) => written.get(h) ?? HISTORY_LENGTH;
  const recent = recentTransitions(record, own);
  const transitions = [...recent, ...suspectedBy(nodeEvents, recent, record)]
    .sort((a, b) => a.at.getTime() - b.at.getTime() || rank(a) - rank(b))
    .filter((h) => sinceMs === null || h.at.getTime() >= sinceMs)
    .map((h) => line(h, written.has(h)));
  const oldestEvent = events?.[0];
  const reach = {
    recordKeeps: HISTORY_LENGTH,
    recordSince: record.createdAt.toISOString(),
    recordFull: record.history.length >= HISTORY_LENGTH,
    recordOldest: record.history[0]?.at.toISOString() ?? null,
    timelineKeeps: TIMELINE_CAP,
    timelineOldest: oldestEvent ? iso(oldestEvent.at) : null,
    timelineRead: events !== null,
    since: sinceMs === null ? null : iso(sinceMs),
  };
  return {
    consumer: record._id,
    state: record.machine.state,
    stateSince: record.stateSince.toISOString(),
    reach: { ...reach, words: reachWords(reach, record.provider) },
    transitions,
  };
}
