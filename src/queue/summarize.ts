/** A record in brief (see `consumer-summary.ts`), as workers and sweeps note it. */
import type { ConsumerRecord, UnreadableRecord } from '../store/consumer-record.js';
import type { ConsumerSummary } from './consumer-summary.js';

type Summarized = Pick<ConsumerRecord, 'rev' | 'machine' | 'stateSince' | 'desired' | 'timer' | 'lastCheck'> & Partial<Pick<ConsumerRecord, 'refused'>>;

export function summaryOf(record: Summarized): ConsumerSummary {
  const { lastCheck, machine } = record;
  return {
    rev: record.rev,
    state: machine.state,
    since: record.stateSince.getTime(),
    login: record.desired.login,
    brakeCount: machine.context.brakeCount,
    reason: machine.context.reason,
    dueAt: record.timer?.dueAt.getTime() ?? null,
    lastCheck: lastCheck ? { at: lastCheck.at.getTime(), outcome: lastCheck.outcome, detail: lastCheck.detail } : null,
    ...(record.refused ? { refused: record.refused.problems.join('; ') } : {}),
  };
}

/** A record this holdfast cannot read, in brief: unserved, saying why (`seen`: when it was read). */
export function unreadableSummary(record: UnreadableRecord, seen: Date): ConsumerSummary {
  return {
    rev: record.rev ?? 0,
    state: 'unreadable',
    since: (record.since ?? seen).getTime(),
    login: record.login ?? '',
    brakeCount: 0,
    reason: `unreadable: ${record.unreadable}`,
    dueAt: null,
    lastCheck: null,
  };
}
