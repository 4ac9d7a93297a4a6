/** The contested consumers of a sharded queue, each counted in its shard (`../sharded-coordination.ts`). */
import type { ContestReads, ProviderContests } from '../coordination.js';
import type { ContestedConsumer } from '../contest.js';
import type { Shards } from './shards.js';

export class ShardedContests implements ContestReads {
  constructor(private readonly shards: Shards<ContestReads>) {}

  /** Every shard's contested consumers of each provider, counted and merged (those whose contest ends first listed). */
  async contested(providers: readonly string[], nowMs: number, limit: number): Promise<Map<string, ProviderContests>> {
    const each = await this.shards.all((s) => s.contested(providers, nowMs, limit));
    return new Map(
      providers.map((p) => {
        const parts = each.map((m) => m.get(p) ?? { count: 0, listed: [] });
        const listed = parts
          .flatMap((x) => x.listed)
          .sort((a, b) => a.until - b.until)
          .slice(0, limit);
        return [p, { count: parts.reduce((n, x) => n + x.count, 0), listed }];
      }),
    );
  }

  contestOf(key: string, nowMs: number): Promise<ContestedConsumer | null> {
    return this.shards.of(key).contestOf(key, nowMs);
  }
}
