/**
 * A consumer's history read (`consumer-history.ts`): its record from the store, its provider's
 * timeline from the queue's Redis within a deadline (a Redis that does not answer leaves the
 * history to the record, and says so). Two reads, for a person asking; nothing on any routine path.
 */
import { HoldfastError } from '../errors/holdfast-error.js';
import type { NoteReads, SuspectSignals } from '../queue/coordination.js';
import { isUnreadable } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { consumerKeyInput } from '../store/consumer-key-input.js';
import { consumerHistory, type ConsumerHistory } from './consumer-history.js';
import { readTimelines } from './timeline-read.js';

export interface HistorySources {
  store: Pick<ConsumerStore, 'get'>;
  reads: Pick<NoteReads, 'timeline'>;
  /** The provider's node events (each made its consumers suspect); absent: none listed. */
  nodeEvents?: Pick<SuspectSignals, 'suspectEvents'>;
}

/**
 * The history of the consumer `given` (a key as typed: `CONSUMER_KEY_INVALID` unless it is one),
 * transitions before `sinceMs` left out; `CONSUMER_UNKNOWN` when it has no record,
 * `RECORD_UNREADABLE` when its record cannot be read.
 */
export async function readHistory(
  sources: HistorySources,
  given: string,
  sinceMs: number | null,
  now = Date.now(),
): Promise<ConsumerHistory> {
  const { key, provider } = consumerKeyInput(given);
  const [record, timelines, nodeEvents] = await Promise.all([
    sources.store.get(key),
    readTimelines(sources.reads, [provider], now, undefined, Infinity),
    // within the timeline's deadline, as it is read: none listed when the queue's Redis does not answer
    sources.nodeEvents?.suspectEvents(provider).catch(() => []) ?? [],
  ]);
  if (record === null)
    throw new HoldfastError(
      'CONSUMER_UNKNOWN',
      `no consumer ${key}: not declared, or its first apply has not been written yet`,
    );
  if (isUnreadable(record))
    throw new HoldfastError('RECORD_UNREADABLE', `the record of ${key} cannot be read: ${record.unreadable}`);
  return consumerHistory(record, timelines ? (timelines.get(provider) ?? []) : null, sinceMs, nodeEvents);
}
