/** The locks of a sharded queue: each consumer's in its shard (`../sharded-coordination.ts`). */
import type { Asked, CheckMemo, Claim, LockClaim, LockRelease, LocksPart, Released } from '../coordination.js';
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

  /** Each shard's claims in one call (a round's are all of one shard), the replies in the order asked. */
  async claimMany(claims: readonly LockClaim[]): Promise<Array<Claim | null>> {
    const out = new Array<Claim | null>(claims.length);
    await Promise.all(
      this.byShardAt(claims).map(async ([shard, at]) => {
        const replies = await this.shards.list[shard]!.claimMany(at.map((i) => claims[i]!));
        at.forEach((i, j) => (out[i] = replies[j] ?? null));
      }),
    );
    return out;
  }

  /** Each shard's releases in one call, each reply as {@link release} makes it. */
  async releaseMany(releases: readonly LockRelease[]): Promise<Released[]> {
    const out = new Array<Released>(releases.length);
    await Promise.all(
      this.byShardAt(releases).map(async ([shard, at]) => {
        const replies = await this.shards.list[shard]!.releaseMany(at.map((i) => releases[i]!));
        at.forEach((i, j) => (out[i] = this.told(releases[i]!.provider, shard, replies[j])));
      }),
    );
    return out;
  }

  /** The positions of `items` by the shard of each one's key. */
  private byShardAt(items: ReadonlyArray<{ key: string }>): Array<[number, number[]]> {
    const at = new Map<number, number[]>();
    items.forEach(({ key }, i) => {
      const shard = shardOf(key, this.shards.count);
      const list = at.get(shard);
      if (list) list.push(i);
      else at.set(shard, [i]);
    });
    return [...at];
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
    askedAt?: number,
  ): Promise<Released> {
    const shard = shardOf(key, this.shards.count);
    const released = await this.shards.list[shard]!.release(key, provider, token, memo, asked, askedAt);
    return this.told(provider, shard, released);
  }

  /**
   * What a shard's release replied for `provider`, its count kept: the provider's estimated count over every shard
   * (undefined when the shard did not tell one).
   */
  private told(provider: string, shard: number, released: Released | undefined): Released {
    const count = released?.askedAbout;
    const suspect = released?.suspect ?? false;
    if (count === undefined) return { askedAbout: undefined, suspect };
    const counts = this.asked.get(provider) ?? Array.from({ length: this.shards.count }, () => undefined);
    counts[shard] = count;
    this.asked.set(provider, counts);
    return { askedAbout: estimatedTotal(counts), suspect };
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
