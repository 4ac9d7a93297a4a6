/** A record in brief (see `consumer-summary.ts`), as workers and sweeps note it. */
import { readPersisted } from '../../machines/machine-step.js';
import type { ConsumerRecord } from '../store/consumer-record.js';
import type { ConsumerSummary } from './consumer-summary.js';

type Summarized = Pick<ConsumerRecord, 'rev' | 'machine' | 'stateSince' | 'desired' | 'timer' | 'lastCheck'> & Partial<Pick<ConsumerRecord, 'refused'>>;

export function summaryOf(record: Summarized): ConsumerSummary {
  const { lastCheck } = record;
  const read = readPersisted(record.machine.version, record.machine);
  const consumer = 'consumer' in read ? read.consumer : undefined;
  return {
    rev: record.rev,
    state: consumer?.state ?? 'unreadable',
    since: record.stateSince.getTime(),
    login: record.desired.login,
    brakeCount: consumer?.context.brakeCount ?? 0,
    reason: consumer ? consumer.context.reason : `unreadable: ${'problem' in read ? read.problem : ''}`,
    dueAt: record.timer?.dueAt.getTime() ?? null,
    lastCheck: lastCheck ? { at: lastCheck.at.getTime(), outcome: lastCheck.outcome, detail: lastCheck.detail } : null,
    ...(record.refused ? { refused: record.refused.problems.join('; ') } : {}),
  };
}

