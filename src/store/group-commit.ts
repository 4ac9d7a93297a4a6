/**
 * Group commit for updates by `_id` alone: while one bulk write is in flight, the updates that
 * arrive wait and go together in the next. FerretDB spends most of an update's 2 ms on the
 * command around it; in a bulk, each update costs about 1 ms. The updates of a bulk touch
 * different records (each has one writer), so their order does not matter.
 */
import type { AnyBulkWriteOperation, Collection, Document, Filter, UpdateFilter } from 'mongodb';
import { withStoreRetry } from './store-retry.js';

interface Pending<T extends Document> {
  key: string;
  update: UpdateFilter<T>;
  /** Resolves with whether the record was there to update. */
  done: (matched: boolean) => void;
  failed: (error: unknown) => void;
}

const MAX_BATCH = 256;

export class GroupCommit<T extends Document & { _id: string }> {
  private readonly pending: Pending<T>[] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly collection: Collection<T>) {}

  /** Updates the record `key`; resolves with whether it was there. */
  update(key: string, update: UpdateFilter<T>): Promise<boolean> {
    return new Promise<boolean>((done, failed) => {
      this.pending.push({ key, update, done, failed });
      this.flushing ??= this.flush().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, MAX_BATCH);
      const byId = (key: string) => ({ _id: key }) as Filter<T>;
      try {
        const operations: AnyBulkWriteOperation<T>[] = batch.map(({ key, update }) => ({ updateOne: { filter: byId(key), update } }));
        // by _id alone, an update applied twice (a retry after a lost reply) writes the same fields
        const result = await withStoreRetry(`save ${batch.length} records`, () => this.collection.bulkWrite(operations, { ordered: false }));
        if (result.matchedCount === batch.length) {
          for (const write of batch) write.done(true);
          continue;
        }
        // some record was gone: find out which (rare: a record has one writer)
        for (const write of batch) {
          const found = await withStoreRetry(`read the record of ${write.key}`, () => this.collection.findOne(byId(write.key), { projection: { _id: 1 } }));
          write.done(found !== null);
        }
      } catch (error) {
        for (const write of batch) write.failed(error);
      }
    }
  }
}
