/** A record in brief (see `consumer-brief.ts`), as workers and sweeps note it. */
import { STATE_MEANINGS } from '../../machines/consumer-health.js';
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import type { ConsumerRecord, HistoryEntry, UnreadableRecord } from '../store/consumer-record.js';
import type { ConsumerBrief } from './consumer-brief.js';

type BriefSource = Pick<
  ConsumerRecord,
  'rev' | 'machine' | 'stateSince' | 'desired' | 'timer' | 'lastCheck' | 'history'
> &
  Partial<Pick<ConsumerRecord, 'refused'>>;

/**
 * When the consumer last left a served state, walking `history` (oldest first) back through
 * unserved states; undefined when the history shows no such moment (never served in what it keeps).
 */
export function leftServedAt(history: readonly HistoryEntry[]): number | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (STATE_MEANINGS[entry.from]?.healthy) return entry.at.getTime();
    if (STATE_MEANINGS[entry.to]?.healthy) return undefined;
  }
  return undefined;
}

/**
 * When a consumer in `state` stopped being served: the last transition out of a served state
 * in `history` (oldest first); when none is remembered, its oldest transition (it has been
 * unserved at least since then) or `stateSince`. Undefined while it is served.
 */
export function unservedSince(
  state: ConsumerStateName | 'unreadable',
  history: readonly HistoryEntry[],
  stateSince: Date,
): number | undefined {
  if (state !== 'unreadable' && STATE_MEANINGS[state].healthy) return undefined;
  return leftServedAt(history) ?? Math.min(history[0]?.at.getTime() ?? Infinity, stateSince.getTime());
}

export function briefOf(record: BriefSource): ConsumerBrief {
  const { lastCheck, machine } = record;
  const unserved = unservedSince(machine.state, record.history, record.stateSince);
  return {
    rev: record.rev,
    state: machine.state,
    since: record.stateSince.getTime(),
    ...(unserved === undefined ? {} : { unservedSince: unserved }),
    login: record.desired.login,
    brakeCount: machine.context.brakeCount,
    reason: machine.context.reason,
    dueAt: record.timer?.dueAt.getTime() ?? null,
    lastCheck: lastCheck ? { at: lastCheck.at.getTime(), outcome: lastCheck.outcome, detail: lastCheck.detail } : null,
    ...(record.refused ? { refused: record.refused.problems.join('; ') } : {}),
  };
}

/** A record this holdfast cannot read, in brief: unserved, saying why (`seen`: when it was read). */
export function unreadableBrief(record: UnreadableRecord, seen: Date): ConsumerBrief {
  return {
    rev: record.rev ?? 0,
    state: 'unreadable',
    since: (record.since ?? seen).getTime(),
    unservedSince: (record.since ?? seen).getTime(),
    login: record.login ?? '',
    brakeCount: 0,
    reason: `unreadable: ${record.unreadable}`,
    dueAt: null,
    lastCheck: null,
  };
}
