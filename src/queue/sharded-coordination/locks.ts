/** The locks of a sharded queue: each consumer's in its shard (`../sharded-coordination.ts`). */
import type { Asked, CheckMemo, Claim, LocksPart } from '../coordination.js';
import { shardOf } from '../shard-of.js';
import { merged, type Shards } from './shards.js';

export class ShardedLocks implements LocksPart {
  /**
   * How many consumers of each provider each shard's asked-at set held when last told (what
   * `release` replies): their sum is the provider's, what paces its deep checks.
   */
  private readonly asked = new Map<string, Array<number | undefined>>();

  constructor(private readonly shards: Shards<LocksPart>) {}

  claim(key: string, token: string, ttlMs: number): Promise<Claim | null> {
    return this.shards.of(key).claim(key, token, ttlMs);
  }

  extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return this.shards.of(key).extend(key, token, ttlMs);
  }

  async release(
    key: string,
    provider: string,
    token: string,
    memo?: CheckMemo,
    asked?: Asked,
  ): Promise<number | undefined> {
    const shard = shardOf(key, this.shards.count);
    const count = await this.shards.list[shard]!.release(key, provider, token, memo, asked);
    if (count === undefined) return undefined;
    const counts = this.asked.get(provider) ?? Array.from({ length: this.shards.count }, () => undefined);
    counts[shard] = count;
    this.asked.set(provider, counts);
    return estimatedTotal(counts);
  }

  forgetRevision(key: string): Promise<void> {
    return this.shards.of(key).forgetRevision(key);
  }

  rememberRevision(key: string, rev: number): Promise<void> {
    return this.shards.of(key).rememberRevision(key, rev);
  }

  forgetConsumer(key: string, provider: string): Promise<void> {
    return this.shards.of(key).forgetConsumer(key, provider);
  }

  markRemoved(key: string, at: number): Promise<void> {
    return this.shards.of(key).markRemoved(key, at);
  }

  clearRemoved(key: string): Promise<void> {
    return this.shards.of(key).clearRemoved(key);
  }

  async checkMemos(keys: readonly string[]): Promise<Map<string, CheckMemo>> {
    return merged(
      await Promise.all(this.shards.byShard(keys, (k) => k).map(([shard, list]) => shard.checkMemos(list))),
    );
  }
}

/**
 * A provider's consumers across shards: the shards heard from, and as many again as their mean for each not heard from
 * yet.
 */
function estimatedTotal(counts: ReadonlyArray<number | undefined>): number {
  const known = counts.filter((c): c is number => c !== undefined);
  const sum = known.reduce((a, b) => a + b, 0);
  return Math.round(sum + (counts.length - known.length) * (sum / known.length));
}
