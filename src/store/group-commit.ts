/**
 * Group commit for writes by `_id` alone: while bulk writes are in flight, the writes that
 * arrive wait and go together in the next. Updates go as `bulkWrite`s, first records as one
 * `insertMany`; each still touches its own record (each has one writer, who awaits each write
 * before the next), so their order does not matter, and each caller learns its own record's
 * outcome.
 *
 * What a record costs FerretDB (SQLite handler, indexed) by the round trip's shape, measured by
 * `test/bench/store-batch-cost.ts`: an update alone 2 ms, in a bulk of 32 about 1 ms, of 64 about
 * 0.75 ms; an insert in a bulk of 1,000 about 0.05 ms.
 *
 * **FerretDB 1.24 hangs for good once about 100 update statements are open at once**, over all
 * its clients: its `update` command keeps each statement's read open (a SQLite connection of a
 * pool of 100) until the whole command ends, and each statement's write needs another one
 * (`internal/handler/msg_update.go`: `defer closer.Close()` in the loop over statements). One bulk
 * of 100 hangs; so do two of 52 at once (two of 48 do not, measured). So a process keeps at most
 * {@link MAX_UPDATES} × {@link UPDATE_BULKS_IN_FLIGHT} = 32 statements open: three holdfast
 * processes on one FerretDB stay under its limit. Two bulks of 16 in flight write as fast as one
 * of 64 (2,138 against 1,921 updates a second alone; 858 against 798 beside 16 reads in flight).
 */
import {
  MongoBulkWriteError,
  type AnyBulkWriteOperation,
  type Collection,
  type Document,
  type Filter,
  type OptionalUnlessRequiredId,
  type UpdateFilter,
} from 'mongodb';
import { transientWriteCode, withStoreRetry } from './store-retry.js';

interface Pending<W> {
  key: string;
  write: W;
  /** Resolves with whether the write took: the record was there to update, or was not there yet to create. */
  done: (took: boolean) => void;
  failed: (error: unknown) => void;
}

/** Updates in one bulk at most (see above: FerretDB 1.24's limit on open statements). */
export const MAX_UPDATES = 16;
/** Bulks of updates one process has in flight at most. */
export const UPDATE_BULKS_IN_FLIGHT = 2;
/** First records in one `insertMany` at most. */
export const MAX_INSERTS = 1000;

/** MongoDB's duplicate key error: the record exists already. */
const DUPLICATE_KEY = 11000;

/** A record by `_id` alone, the one filter FerretDB finds by index. */
const byId = <T extends Document>(key: string) => ({ _id: key }) as Filter<T>;

/** One update by `_id` alone. */
const updateById = <T extends Document>({ key, write }: Pending<UpdateFilter<T>>): AnyBulkWriteOperation<T> => ({
  updateOne: { filter: byId<T>(key), update: write },
});

/** The statements a bulk write refused, each with its index in the bulk. */
const writeErrorsOf = (error: MongoBulkWriteError) =>
  error.writeErrors instanceof Array ? error.writeErrors : [error.writeErrors];

/**
 * Collects writes while bulks are in flight; `send` writes one batch and settles each of it; up to `lanes` batches at
 * once.
 */
class Batcher<W> {
  private readonly pending: Pending<W>[] = [];
  private flushing = 0;

  constructor(
    private readonly max: number,
    private readonly lanes: number,
    private readonly send: (batch: Pending<W>[]) => Promise<void>,
  ) {}

  add(key: string, write: W): Promise<boolean> {
    return new Promise<boolean>((done, failed) => {
      this.pending.push({ key, write, done, failed });
      if (this.flushing < this.lanes) {
        this.flushing++;
        void this.flush();
      }
    });
  }

  /**
   * One lane: sends what is pending, a batch at a time, until nothing is. It is counted out in
   * the same turn that finds nothing pending, so a write that arrives after that turn starts a
   * lane of its own (counted out later, a write arriving in between would wait for the next).
   */
  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.max);
        try {
          await this.send(batch);
        } catch (error) {
          for (const write of batch) write.failed(error);
        }
      }
    } finally {
      this.flushing--;
    }
  }
}

export class GroupCommit<T extends Document & { _id: string }> {
  private readonly updates: Batcher<UpdateFilter<T>>;
  private readonly inserts: Batcher<OptionalUnlessRequiredId<T>>;

  constructor(private readonly collection: Collection<T>) {
    this.updates = new Batcher(MAX_UPDATES, UPDATE_BULKS_IN_FLIGHT, (batch) => this.sendUpdates(batch));
    this.inserts = new Batcher(MAX_INSERTS, 1, (batch) => this.sendInserts(batch));
  }

  /** Updates the record `key`; resolves with whether it was there. */
  update(key: string, update: UpdateFilter<T>): Promise<boolean> {
    return this.updates.add(key, update);
  }

  /** Creates the record `document` names; resolves with false when one exists already. */
  insert(document: OptionalUnlessRequiredId<T> & { _id: string }): Promise<boolean> {
    return this.inserts.add(document._id, document);
  }

  /**
   * One `bulkWrite` of updates, unordered: each caller learns its own record's outcome. When the
   * server refuses a statement, each of the bulk is sent again alone: the refused one is that
   * caller's `STORE_UNAVAILABLE` alone (its record stays as it was: what was written before the
   * apply says `applying`, rule 3), the others are written. FerretDB 1.24 cannot be told apart
   * otherwise: it ends an unordered bulk at the first statement it refuses, says it was the bulk's
   * first (index 0) and counts none matched, those before it written (measured).
   */
  private async sendUpdates(batch: Pending<UpdateFilter<T>>[]): Promise<void> {
    // by _id alone, an update applied twice (a retry after a lost reply, a statement sent again) writes the same fields
    const matched = await withStoreRetry(`save ${batch.length} records`, () =>
      this.collection.bulkWrite(batch.map(updateById), { ordered: false }).then(
        (result) => result.matchedCount,
        (error: unknown) => {
          if (error instanceof MongoBulkWriteError && !transientWriteCode(error.code as number | undefined))
            return 'refused' as const;
          throw error;
        },
      ),
    );
    if (matched !== 'refused') return this.settleWritten(batch, matched);
    for (const write of batch) {
      await withStoreRetry(`save the record of ${write.key}`, () =>
        this.collection.updateOne(byId(write.key), write.write),
      ).then(
        (result) => write.done(result.matchedCount > 0),
        (error: unknown) => write.failed(error),
      );
    }
  }

  /** Tells the callers of `writes`, all written, whether their record was there (`matched` of them were). */
  private async settleWritten(writes: Pending<UpdateFilter<T>>[], matched: number): Promise<void> {
    if (matched === writes.length) {
      for (const write of writes) write.done(true);
      return;
    }
    // some record was gone: find out which (rare: a record has one writer)
    for (const write of writes) {
      const found = await withStoreRetry(`read the record of ${write.key}`, () =>
        this.collection.findOne(byId(write.key), { projection: { _id: 1 } }),
      );
      write.done(found !== null);
    }
  }

  /**
   * One `insertMany`, unordered: a record that exists already (its duplicate key) is that
   * caller's false alone; the others are created. What failed for another reason is retried
   * alone, as a transient store error is.
   */
  private async sendInserts(batch: Pending<OptionalUnlessRequiredId<T>>[]): Promise<void> {
    let left = batch;
    await withStoreRetry(`create ${batch.length} records`, async () => {
      try {
        await this.collection.insertMany(
          left.map((p) => p.write),
          { ordered: false },
        );
        for (const write of left) write.done(true);
        left = [];
      } catch (error) {
        if (!(error instanceof MongoBulkWriteError)) throw error;
        const failed = new Map(writeErrorsOf(error).map((e) => [e.index, e.code]));
        left.forEach((write, index) => {
          const code = failed.get(index);
          if (code === undefined) write.done(true);
          else if (code === DUPLICATE_KEY) write.done(false);
        });
        left = left.filter((_, index) => failed.has(index) && failed.get(index) !== DUPLICATE_KEY);
        if (left.length > 0) throw error;
      }
    });
  }
}
