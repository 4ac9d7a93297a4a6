/**
 * What a provider's timeline draws: the moments a consumer stopped being served (`lost`), was
 * held again after such a loss (`healed`, with how long it took) or was braked (`brake`). Each is
 * derived from a state transition where the record draft notes it, and kept in a capped stream
 * in the queue's Redis (see `coordination/notes.ts`). Never a secret: the consumer's key, its
 * new state and the reason the status already shows.
 */
import { STATE_MEANINGS } from '../../machines/consumer-health.js';
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import { HISTORY_LENGTH, type HistoryEntry } from '../store/consumer-record.js';
import type { TransitionCause } from '../store/transition-cause.js';
import { leftServedAt } from './brief-of.js';

/**
 * `turnedAway`: a held consumer's app began failing to log in (its backend's log of failed logins, `by: backend`); not
 * a change of its state, and not drawn.
 */
export const TIMELINE_KINDS = ['lost', 'healed', 'brake', 'turnedAway'] as const;

export interface TimelineEvent {
  /** When (ms since the epoch). */
  at: number;
  kind: (typeof TIMELINE_KINDS)[number];
  /** The consumer's key (`<provider>/<id>`). */
  key: string;
  /** The state it moved to. */
  state: ConsumerStateName;
  /** The state it moved from (absent in events written before holdfast kept it). */
  from?: ConsumerStateName;
  /** The reason its record gives (the status's words), or null. */
  reason: string | null;
  /** For `healed`: how long it was not served (ms). */
  tookMs?: number;
  /** Who caused the transition (absent in events written before holdfast kept it). */
  by?: TransitionCause;
  /** On a backend of several nodes, the node(s) it concerned. */
  node?: string;
}

const healthy = (state: ConsumerStateName) => STATE_MEANINGS[state].healthy;

/**
 * Whether the consumer was served before `transition`: its state was a served one, or it was
 * being checked (`checking`) straight after one. `history` is the record's, before it.
 */
function servedBefore(transition: HistoryEntry, history: readonly HistoryEntry[]): boolean {
  if (transition.from !== 'checking') return healthy(transition.from);
  const last = history[history.length - 1];
  return last !== undefined && last.to === 'checking' && healthy(last.from);
}

/**
 * When the consumer left a served state; a full history of unserved states says since its oldest entry at least;
 * undefined for a first apply.
 */
function lostAt(history: readonly HistoryEntry[]): number | undefined {
  return leftServedAt(history) ?? (history.length >= HISTORY_LENGTH ? history[0]!.at.getTime() : undefined);
}

/** The timeline's events for `transition` of consumer `key` (`history`: its record's, before the transition). */
export function timelineEventsOf(
  key: string,
  transition: HistoryEntry,
  history: readonly HistoryEntry[],
): TimelineEvent[] {
  const { to, reason, by, node } = transition;
  const at = transition.at.getTime();
  const served = servedBefore(transition, history);
  // where from, who caused it and where, when the transition says
  const cause = { from: transition.from, ...(by !== undefined ? { by } : {}), ...(node !== undefined ? { node } : {}) };
  const out: TimelineEvent[] = [];
  if (served && !healthy(to) && to !== 'checking') out.push({ at, kind: 'lost', key, state: to, reason, ...cause });
  if (to === 'held' && !served) {
    const since = lostAt(history);
    if (since !== undefined) out.push({ at, kind: 'healed', key, state: to, reason, tookMs: at - since, ...cause });
  }
  if (to === 'backoff') out.push({ at, kind: 'brake', key, state: to, reason, ...cause });
  return out;
}
