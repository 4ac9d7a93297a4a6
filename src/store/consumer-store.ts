/**
 * The record store (MongoDB): one record per consumer, written only by the worker holding the
 * consumer's lock, and one status per provider, written only by the desired-state sync. One
 * writer per document, so a server that rewrites whole documents (FerretDB) loses nothing.
 *
 * Every read and write names a record by `_id` alone, the one filter FerretDB finds by index;
 * on a server that evaluates more than `_id` by index (mongod) a write also checks the
 * revision it read (compare-and-swap). Only the sweep and the status read every record.
 * Works on mongod and on FerretDB: no transactions, change streams or TTL indexes.
 *
 * Every document read is decoded once, here (`record-codec.ts`), into a record of this version
 * or an unreadable one saying why; nothing past the store sees a stored form.
 */
import type { Collection, Db, Filter } from 'mongodb';
import { HoldfastError } from '../errors/holdfast-error.js';
import type { PersistedConsumer } from '../../machines/machine-step.js';
import {
  HISTORY_LENGTH,
  type ConsumerRecord,
  type DesiredSpec,
  type HistoryEntry,
  type LastCheck,
  type RefusedSpec,
  type StoredConsumer,
  type WaitRecord,
} from './consumer-record.js';
import { GroupCommit } from './group-commit.js';
import { decodeRecord, encodeRecord, stored, type RecordDocument } from './record-codec.js';
import { withStoreRetry } from './store-retry.js';

/** The store's collections: one record per consumer, one status per provider. */
export const STORE_COLLECTIONS = { records: 'consumers', providers: 'providers' } as const;

/** What a worker writes after a transition. */
export interface RecordChange {
  machine?: PersistedConsumer;
  /** Appended to the history (and `stateSince` moves) when the state changed. */
  transition?: HistoryEntry;
  /** A desired spec delivered to the machine, and when the sync read it. */
  desired?: { spec: DesiredSpec; at: number };
  appliedAt?: Date;
  /** A newer spec refused while the accepted one is kept (null: none any more). */
  refused?: RefusedSpec | null;
  timer: WaitRecord | null;
  /** An effect other than a check follows, bounded by this time; null otherwise. */
  effectUntil: Date | null;
  lastCheck?: LastCheck;
}

export interface ProviderStatus {
  _id: string;
  /** Why the contributions file was last refused, or null when the last read was good. */
  contributionsError: string | null;
  errorSince: Date | null;
  lastGoodAt: Date | null;
  consumers: number;
  /**
   * A change that would remove too many consumers at once, held back until a person confirms it (absent or null: none).
   */
  heldRemovals?: HeldRemovals | null;
}

/** A change of a contributions file held back by the mass-removal guard. */
export interface HeldRemovals {
  file: string;
  /** Identifies exactly this change (a digest of what it would deliver): a confirmation names it. */
  change: string;
  /** How many consumers it would remove, of how many. */
  removals: number;
  of: number;
  since: Date;
  /** Some of the consumers it would remove. */
  sample: string[];
}

/** Operations this process asked of the store, for the benchmark's store cost. */
export interface StoreCounters {
  reads: number;
  writes: number;
  /** Documents streamed by sweeps and listings. */
  scanned: number;
}

export class ConsumerStore {
  readonly counters: StoreCounters = { reads: 0, writes: 0, scanned: 0 };
  private readonly records: Collection<RecordDocument>;
  private readonly providers: Collection<ProviderStatus>;
  /** First records, grouped everywhere; updates too where they go by `_id` alone (FerretDB). */
  private readonly group: GroupCommit<RecordDocument>;
  private readonly grouped: GroupCommit<RecordDocument> | undefined;

  /**
   * @param revisionInFilter whether writes may also filter on `rev`: true where the server
   * finds `{_id, rev}` by index and updates atomically (mongod); FerretDB scans every
   * document for any filter but `_id` alone (and its updates are not atomic anyway), so
   * there a write relies on the consumer's lock alone.
   */
  constructor(
    db: Db,
    private readonly revisionInFilter: boolean,
  ) {
    this.records = db.collection<RecordDocument>(STORE_COLLECTIONS.records);
    this.providers = db.collection<ProviderStatus>(STORE_COLLECTIONS.providers);
    this.group = new GroupCommit(this.records);
    this.grouped = revisionInFilter ? undefined : this.group;
  }

  /** Opens the store on `db`, asking the server what it is; `create: false` creates nothing (for the status). */
  static async open(db: Db, options: { create?: boolean } = {}): Promise<ConsumerStore> {
    const info = await withStoreRetry('answer buildInfo', () => db.command({ buildInfo: 1 }));
    const store = new ConsumerStore(db, typeof info.ferretdbVersion !== 'string');
    if (options.create !== false) await store.ensureCollections();
    return store;
  }

  /**
   * Creates the collections (FerretDB creates one lazily, and its tables should exist before an operator indexes them).
   */
  async ensureCollections(): Promise<void> {
    await withStoreRetry('create its collections', async () => {
      const existing = new Set(
        (await this.records.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
      );
      for (const name of [this.records.collectionName, this.providers.collectionName]) {
        if (!existing.has(name)) await this.records.db.createCollection(name).catch(() => undefined);
      }
    });
  }

  private byId(key: string, rev: number): Filter<RecordDocument> {
    return this.revisionInFilter ? { _id: key, rev } : { _id: key };
  }

  /** The record of `key`, decoded (see `record-codec.ts`): null when there is none. */
  async get(key: string): Promise<StoredConsumer | null> {
    this.counters.reads++;
    const record = await withStoreRetry(`read the record of ${key}`, () => this.records.findOne({ _id: key }));
    return record ? decodeRecord(record) : null;
  }

  /**
   * Writes a new record; `REVISION_CONFLICT` when one exists. The first records of many
   * consumers arriving together go in one `insertMany` (`group-commit.ts`).
   */
  async insert(record: ConsumerRecord): Promise<void> {
    this.counters.writes++;
    const created = await this.group.insert(encodeRecord(record));
    if (!created) throw new HoldfastError('REVISION_CONFLICT', `record ${record._id} was created by another worker`);
  }

  /**
   * Writes a worker's change to the record it read at `rev`; returns the new revision. Throws
   * `REVISION_CONFLICT` when the record is gone, or (where the server checks it) moved on.
   */
  async save(
    key: string,
    rev: number,
    change: RecordChange,
    history: readonly HistoryEntry[],
    now: Date,
  ): Promise<number> {
    const set: Record<string, unknown> = {
      rev: rev + 1,
      timer: stored.timer(change.timer),
      effectUntil: change.effectUntil,
      updatedAt: now,
    };
    if (change.machine) set.machine = stored.machine(change.machine);
    if (change.transition) {
      set.stateSince = change.transition.at;
      set.history = stored.history([...history, change.transition].slice(-HISTORY_LENGTH));
    }
    if (change.desired) {
      set.desired = stored.desired(change.desired.spec);
      set.desiredAt = change.desired.at;
    }
    if (change.appliedAt) set.appliedAt = change.appliedAt;
    if (change.refused !== undefined) set.refused = change.refused;
    if (change.lastCheck) set.lastCheck = stored.lastCheck(change.lastCheck);
    this.counters.writes++;
    // a record written before machine versions loses its old `snapshot` when it gains `machine`
    const update = change.machine ? { $set: set, $unset: { snapshot: '' as const } } : { $set: set };
    const matched = this.grouped
      ? await this.grouped.update(key, update)
      : (await withStoreRetry(`save the record of ${key}`, () => this.records.updateOne(this.byId(key, rev), update)))
          .matchedCount > 0;
    if (!matched)
      throw new HoldfastError(
        'REVISION_CONFLICT',
        `record ${key} changed under this worker (expected revision ${rev})`,
      );
    return rev + 1;
  }

  /** Deletes a removed consumer's record. */
  async delete(key: string, rev: number): Promise<void> {
    this.counters.writes++;
    await withStoreRetry(`delete the record of ${key}`, () => this.records.deleteOne(this.byId(key, rev)));
  }

  /** Every record, decoded and streamed (a full read of the collection: for start-up and rare sweeps only). */
  async *scan(): AsyncGenerator<StoredConsumer> {
    const cursor = this.records.find({}, { batchSize: 1000 });
    try {
      for (;;) {
        const record = await withStoreRetry('read the next records', () => cursor.next());
        if (record === null) return;
        this.counters.scanned++;
        yield decodeRecord(record);
      }
    } finally {
      await cursor.close().catch(() => undefined);
    }
  }

  /** Every record, in key order (for the status). */
  async list(): Promise<StoredConsumer[]> {
    const records: StoredConsumer[] = [];
    for await (const record of this.scan()) records.push(record);
    return records.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  }

  async setProviderStatus(status: ProviderStatus): Promise<void> {
    this.counters.writes++;
    await withStoreRetry(`save the status of provider ${status._id}`, () =>
      this.providers.replaceOne({ _id: status._id }, status, { upsert: true }),
    );
  }

  async providerStatus(name: string): Promise<ProviderStatus | null> {
    this.counters.reads++;
    return withStoreRetry(`read the status of provider ${name}`, () => this.providers.findOne({ _id: name }));
  }

  async providerStatuses(): Promise<ProviderStatus[]> {
    const statuses = await withStoreRetry('read the providers', () => this.providers.find({}).toArray());
    return statuses.sort((a, b) => (a._id < b._id ? -1 : 1));
  }
}
