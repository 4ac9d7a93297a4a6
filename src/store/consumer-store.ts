/**
 * The record store (MongoDB): one record per consumer, written with a compare-and-swap on
 * its revision. Filters stay on `_id` (and equality on top-level fields) so that MongoDB wire
 * servers without secondary-index pushdown (FerretDB) find the record by its key.
 * Works on mongod and on FerretDB (no transactions, change streams or TTL indexes needed).
 */
import type { Collection, Db, Filter } from 'mongodb';
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import {
  HISTORY_LENGTH,
  type ConsumerRecord,
  type DesiredSpec,
  type HistoryEntry,
  type LastCheck,
  type TimerRecord,
} from './consumer-record.js';
import { decodeKeys, encodeKeys } from './key-codec.js';

/** What a worker writes after a transition. */
export interface RecordChange {
  /** The machine's persisted snapshot, when it changed. */
  snapshot?: unknown;
  state?: ConsumerStateName;
  /** The desired spec (at this `desiredRev`) was delivered: clear `dirty` unless it changed since. */
  delivered?: number;
  /** Appended to the history (and `stateSince` moves) when the state changed. */
  transition?: HistoryEntry;
  applied?: ConsumerRecord['applied'];
  timer: TimerRecord | null;
  nextDueAt: Date | null;
  lastCheck?: LastCheck;
  /** An apply or remove follows, bounded by this time; null otherwise. */
  effectUntil: Date | null;
}

/** What the desired-state sync needs to compare a provider's records with its file. */
export interface DesiredIndexEntry {
  key: string;
  specHash: string;
  removed: boolean;
  problems: string[];
}

/** What the resync needs to re-create a missing job. */
export type DueRecord = Pick<ConsumerRecord, '_id' | 'provider' | 'state' | 'timer' | 'rev' | 'effectUntil' | 'nextDueAt' | 'dirty' | 'desired'>;

export interface ProviderStatus {
  _id: string;
  /** Why the contributions file was last refused, or null when the last read was good. */
  contributionsError: string | null;
  errorSince: Date | null;
  lastGoodAt: Date | null;
  consumers: number;
}

function decode(record: ConsumerRecord): ConsumerRecord {
  return {
    ...record,
    snapshot: decodeKeys(record.snapshot),
    desired: { ...record.desired, values: decodeKeys(record.desired.values) },
  };
}

export class ConsumerStore {
  readonly records: Collection<ConsumerRecord>;
  readonly providers: Collection<ProviderStatus>;

  constructor(db: Db) {
    this.records = db.collection<ConsumerRecord>('consumers');
    this.providers = db.collection<ProviderStatus>('providers');
  }

  async ensureIndexes(): Promise<void> {
    await this.records.createIndex({ provider: 1 });
    await this.records.createIndex({ nextDueAt: 1 });
    await this.records.createIndex({ dirty: 1 });
  }

  async get(key: string): Promise<ConsumerRecord | null> {
    const record = await this.records.findOne({ _id: key });
    return record ? decode(record) : null;
  }

  async list(provider?: string): Promise<ConsumerRecord[]> {
    const filter: Filter<ConsumerRecord> = provider ? { provider } : {};
    const records = await this.records.find(filter).sort({ _id: 1 }).toArray();
    return records.map(decode);
  }

  /** Creates a record for a newly declared consumer; does nothing when it exists. */
  async create(init: Pick<ConsumerRecord, '_id' | 'provider' | 'consumerId' | 'desired' | 'snapshot' | 'state'>, now: Date): Promise<boolean> {
    const record: ConsumerRecord = {
      ...init,
      desired: { ...init.desired, values: encodeKeys(init.desired.values) },
      snapshot: encodeKeys(init.snapshot),
      dirty: true,
      desiredRev: 0,
      stateSince: now,
      rev: 0,
      applied: null,
      timer: null,
      nextDueAt: null,
      lastCheck: null,
      history: [],
      effectUntil: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.records.insertOne(record);
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 11000) return false;
      throw error;
    }
  }

  /** Records what the contributions now declare; a worker delivers it to the machine. */
  async setDesired(key: string, desired: DesiredSpec, now: Date): Promise<void> {
    await this.records.updateOne(
      { _id: key },
      { $set: { desired: { ...desired, values: encodeKeys(desired.values) }, dirty: true, updatedAt: now }, $inc: { desiredRev: 1 } },
    );
  }

  /** Marks a consumer no longer declared; a worker removes its login. */
  async markRemoved(key: string, now: Date): Promise<void> {
    await this.records.updateOne({ _id: key }, { $set: { 'desired.removed': true, dirty: true, updatedAt: now }, $inc: { desiredRev: 1 } });
  }

  async desiredIndex(provider: string): Promise<DesiredIndexEntry[]> {
    const rows = await this.records
      .find({ provider }, { projection: { 'desired.specHash': 1, 'desired.removed': 1, 'desired.problems': 1 } })
      .toArray();
    return rows.map((r) => ({ key: r._id, specHash: r.desired.specHash, removed: r.desired.removed, problems: r.desired.problems }));
  }

  /**
   * Writes a worker's change if the record is still at `rev` (compare-and-swap), and, when it
   * delivers the desired spec, still at that `desiredRev`; returns the new revision. Throws
   * `REVISION_CONFLICT` when either changed in between.
   */
  async save(key: string, rev: number, change: RecordChange, history: HistoryEntry[], now: Date): Promise<number> {
    const set: Record<string, unknown> = {
      rev: rev + 1,
      timer: change.timer,
      nextDueAt: change.nextDueAt,
      effectUntil: change.effectUntil,
      updatedAt: now,
    };
    if (change.snapshot !== undefined) set.snapshot = encodeKeys(change.snapshot);
    if (change.state !== undefined) set.state = change.state;
    if (change.transition) {
      set.stateSince = change.transition.at;
      set.history = [...history, change.transition].slice(-HISTORY_LENGTH);
    }
    if (change.applied !== undefined) set.applied = change.applied;
    if (change.lastCheck) set.lastCheck = change.lastCheck;
    const filter: Filter<ConsumerRecord> = { _id: key, rev };
    if (change.delivered !== undefined) {
      filter.desiredRev = change.delivered;
      set.dirty = false;
    }
    const result = await this.records.updateOne(filter, { $set: set });
    if (result.matchedCount === 0) {
      throw new HoldfastError('REVISION_CONFLICT', `record ${key} changed under this worker (expected revision ${rev})`);
    }
    return rev + 1;
  }

  /** Deletes a removed consumer's record if it is still at `rev`. */
  async delete(key: string, rev: number): Promise<void> {
    await this.records.deleteOne({ _id: key, rev });
  }

  /** Records whose next step is overdue: their job may have been lost with the queue. */
  async overdue(before: Date, limit: number): Promise<DueRecord[]> {
    return this.records
      .find(
        { nextDueAt: { $lt: before } },
        { projection: { provider: 1, state: 1, timer: 1, rev: 1, effectUntil: 1, nextDueAt: 1, dirty: 1, 'desired.specHash': 1, 'desired.removed': 1 } },
      )
      .sort({ nextDueAt: 1 })
      .limit(limit)
      .toArray();
  }

  /** Records whose desired spec has not been delivered (its nudge may have been lost). */
  async dirty(limit: number): Promise<DueRecord[]> {
    return this.records
      .find({ dirty: true }, { projection: { provider: 1, state: 1, timer: 1, rev: 1, effectUntil: 1, nextDueAt: 1, dirty: 1, 'desired.specHash': 1, 'desired.removed': 1 } })
      .limit(limit)
      .toArray();
  }

  async setProviderStatus(status: ProviderStatus): Promise<void> {
    await this.providers.replaceOne({ _id: status._id }, status, { upsert: true });
  }

  async providerStatuses(): Promise<ProviderStatus[]> {
    return this.providers.find({}).sort({ _id: 1 }).toArray();
  }
}
