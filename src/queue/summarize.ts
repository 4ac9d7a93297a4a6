/** A record in brief (see `consumer-summary.ts`), as workers and sweeps note it. */
import { readPersisted, type PersistedConsumer } from '../../machines/machine-step.js';
import type { ConsumerRecord } from '../store/consumer-record.js';
import type { ConsumerSummary } from './consumer-summary.js';

type Summarized = Pick<ConsumerRecord, 'rev' | 'machine' | 'stateSince' | 'desired' | 'timer' | 'lastCheck'> & Partial<Pick<ConsumerRecord, 'refused'>>;

export function summaryOf(record: Summarized): ConsumerSummary {
  return summaryFrom(record, readPersisted(record.machine.version, record.machine));
}

/** The summary of a record whose consumer is read already (or cannot be, for `problem`). */
export function summaryFrom(record: Omit<Summarized, 'machine'>, read: { consumer: PersistedConsumer } | { problem: string }): ConsumerSummary {
  const { lastCheck } = record;
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
