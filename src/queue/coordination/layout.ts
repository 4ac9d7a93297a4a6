/**
 * Layout marks: which shard layout (`queue.shards`, and a generation counted up at each change)
 * the queue's Redis was last set up for, and under which generation each shard's entries were
 * written. A shard written under another generation may hold entries of consumers that are no
 * longer its own (they moved when the number of shards changed) or no longer exist: they are
 * cleared, and the next sweep notes every record again (see `sharded-coordination.ts`).
 */
import { CoordinationPart } from './context.js';

/** The queue's shard layout as recorded. */
export interface ShardLayout {
  shards: number;
  generation: number;
}

/** What one shard's coordination knows of the layout. */
export interface LayoutMarks {
  /**
   * The layout recorded under this prefix (meaningful under the prefix as configured); absent: one shard, generation 0.
   */
  layout(): Promise<ShardLayout>;
  recordLayout(layout: ShardLayout): Promise<void>;
  /** The generation this shard's entries were written under (absent: 0). */
  shardGeneration(): Promise<number>;
  /**
   * Clears every consumer's entries in this shard (revisions, check memos, states, briefs, due waits and
   * `providers`' asked-at and could-not-ask sets; not the locks, the timelines or the signals)
   * and marks it written under `generation`.
   */
  resetShard(generation: number, providers: readonly string[]): Promise<void>;
  /** Marks this shard's entries as written under `generation` (after a sweep noted them all again). */
  markShardGeneration(generation: number): Promise<void>;
}

const wholeNumber = (raw: string | undefined): number | null =>
  raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;

/** Layout marks on one connection, under one key table. */
export class Layout extends CoordinationPart implements LayoutMarks {
  async layout(): Promise<ShardLayout> {
    const [shards, generation] = ((await this.redis.get(this.keys.layout)) ?? '').split(' ').map(wholeNumber);
    return shards && generation !== null && generation !== undefined
      ? { shards, generation }
      : { shards: 1, generation: 0 };
  }

  async recordLayout({ shards, generation }: ShardLayout): Promise<void> {
    await this.redis.set(this.keys.layout, `${shards} ${generation}`);
  }

  async shardGeneration(): Promise<number> {
    return wholeNumber((await this.redis.get(this.keys.shardGeneration)) ?? undefined) ?? 0;
  }

  async resetShard(generation: number, providers: readonly string[]): Promise<void> {
    const { revs, memos, states, briefs, due, dueRevs, dueWaits } = this.keys;
    const sets = providers.flatMap((p) => [
      this.keys.checked(p),
      this.keys.couldNotAsk(p),
      this.keys.suspects(p),
      this.keys.suspectEvent(p),
      this.keys.suspectCut(p),
      this.keys.suspectEvents(p),
      this.keys.findings(p),
      this.keys.findingsAt(p),
      this.keys.contested(p),
      this.keys.contestedWhy(p),
    ]);
    await this.redis
      .multi()
      .del(revs, memos, states, briefs, due, dueRevs, dueWaits, ...sets)
      .set(this.keys.shardGeneration, String(generation))
      .exec();
  }

  async markShardGeneration(generation: number): Promise<void> {
    await this.redis.set(this.keys.shardGeneration, String(generation));
  }
}
