/**
 * The due set of one shard: every consumer's wait by when it falls due, its revision and its
 * job's data (see `src/schedule/due-waits.ts`, which seals and reads what is kept here).
 */
import { CoordinationPart } from './context.js';
import type { DueEntry, SettledEntry, TakenEntry } from './scripts.js';
import { TurnBatch } from './turn-batch.js';

export type { DueEntry, SettledEntry, TakenEntry } from './scripts.js';

/** One shard's due set, on one connection, under one key table. */
export class DueSet extends CoordinationPart {
  /** The waits scheduled in one turn of the event loop (a heal's, each its consumer's), one script call (`turn-batch.ts`). */
  private readonly schedules = new TurnBatch<DueEntry, number>((entries) =>
    this.scripts.run('scheduleDue', { entries }),
  );

  /**
   * Schedules each entry unless one of the same or a later revision is there; how many were. A single entry joins the
   * others of its turn; a list (the sweep's) is a batch already, sent as it is.
   */
  async schedule(entries: readonly DueEntry[]): Promise<number> {
    const scheduled =
      entries.length === 1
        ? [await this.schedules.call(entries[0]!)]
        : await this.scripts.run('scheduleDue', { entries });
    return scheduled.reduce((n, one) => n + one, 0);
  }

  /** Takes up to `limit` entries due by `now`, each leased until `leaseUntil`; and when the next falls due. */
  take(now: number, leaseUntil: number, limit: number): Promise<{ taken: TakenEntry[]; nextAt: number | null }> {
    return this.scripts.run('takeDue', { now, leaseUntil, limit });
  }

  /** Settles taken entries, each only while its revision is the one taken. */
  settle(settled: readonly SettledEntry[]): Promise<void> {
    return this.scripts.run('settleDue', { settled });
  }

  /** How many entries the shard holds, and how many are due by `now`. */
  async counts(now: number): Promise<{ scheduled: number; due: number }> {
    const [scheduled, due] = await Promise.all([
      this.redis.zcard(this.keys.due),
      this.redis.zcount(this.keys.due, '-inf', now),
    ]);
    return { scheduled, due };
  }
}
