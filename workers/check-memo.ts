/**
 * What a check learned, in the two forms that keep it: the record's last check (`lastCheck`, for
 * the status) and the check memo in the queue's Redis (noted at the lock's release).
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { CheckMemo } from '../src/queue/coordination.js';
import type { LastCheck } from '../src/store/consumer-record.js';
import type { CheckResult } from './effects.js';

/** The outcome of a check as the record and the status keep it. */
export function lastCheckOf(event: ConsumerEvent, at: Date): LastCheck | undefined {
  switch (event.type) {
    case 'HELD':
      return { at, outcome: 'held', detail: null };
    case 'NOT_HELD':
      return {
        at,
        outcome: 'not-held',
        detail: `${event.reason}${event.node === undefined ? '' : ` on ${event.node}`}: ${event.detail}`,
      };
    case 'NOT_APPLIED':
      return { at, outcome: 'not-held', detail: `${event.reason}: ${event.detail}` };
    case 'CHECK_FAILED':
      return { at, outcome: 'could-not-ask', detail: event.error };
    case 'CHANGED':
      return { at, outcome: 'changed', detail: event.what };
    default:
      return undefined;
  }
}

/**
 * What a check learned, to keep in the queue's Redis; undefined when it learned nothing of the backend (a secret could
 * not be read).
 */
export function memoOf(result: CheckResult, rev: number, previous: CheckMemo | null, at: Date): CheckMemo | undefined {
  const check = lastCheckOf(result.event, at);
  if (!check) return undefined;
  const deepAt = result.deep ? at.getTime() : (previous?.deepAt ?? null);
  return { at: at.getTime(), outcome: check.outcome, detail: check.detail, rev, deepAt };
}
