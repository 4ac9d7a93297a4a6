/**
 * The signals of a sharded queue (`../sharded-coordination.ts`): pauses, probes and the record
 * store's outage in the home shard; could-not-ask sets and the sentinel in every shard.
 */
import type { Pause, SignalsPart, SuspectEvent, Suspects } from '../coordination.js';
import type { Shards } from './shards.js';

export class ShardedSignals implements SignalsPart {
  constructor(
    private readonly shards: Shards<SignalsPart>,
    /** Each shard's name (its prefix), in the same order. */
    private readonly names: readonly string[],
  ) {}

  pauseOf(provider: string): Promise<Pause | null> {
    return this.shards.home.pauseOf(provider);
  }

  pauseProvider(provider: string, pause: Pause): Promise<boolean> {
    return this.shards.home.pauseProvider(provider, pause);
  }

  unpauseProvider(provider: string): Promise<boolean> {
    return this.shards.home.unpauseProvider(provider);
  }

  takeProbe(provider: string, ms: number): Promise<boolean> {
    return this.shards.home.takeProbe(provider, ms);
  }

  pauses(providers: readonly string[]): Promise<Map<string, Pause>> {
    return this.shards.home.pauses(providers);
  }

  async oneCouldNotAsk(provider: string): Promise<string | null> {
    return (await this.shards.all((s) => s.oneCouldNotAsk(provider))).find((key) => key !== null) ?? null;
  }

  async takeCouldNotAsk(provider: string): Promise<string[]> {
    return (await this.shards.all((s) => s.takeCouldNotAsk(provider))).flat();
  }

  async couldNotAskCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await this.shards.all((s) => s.couldNotAskCounts(providers));
    return new Map(providers.map((p) => [p, counts.reduce((sum, c) => sum + (c.get(p) ?? 0), 0)]));
  }

  async markSuspects(
    provider: string,
    event: Omit<SuspectEvent, 'of' | 'asked'>,
    askedBefore?: number,
  ): Promise<string[]> {
    return (await this.shards.all((s) => s.markSuspects(provider, event, askedBefore))).flat();
  }

  async askSuspectsAgain(provider: string): Promise<number> {
    return (await this.shards.all((s) => s.askSuspectsAgain(provider))).reduce((n, m) => n + m, 0);
  }

  /** Noted on every shard (each keeps the event); the event as the first shard that noted it now replies. */
  async suspectsAsked(provider: string, asked: string): Promise<SuspectEvent | null> {
    return (await this.shards.all((s) => s.suspectsAsked(provider, asked))).find((e) => e !== null) ?? null;
  }

  /** The home shard's (each shard keeps the same events, its own count in `of`). */
  async suspectEvents(provider: string): Promise<SuspectEvent[]> {
    const each = await this.shards.all((s) => s.suspectEvents(provider));
    return each[0] ?? [];
  }

  /** Summed over the shards; the event the newest shard noted, its count the shards' sum. */
  async suspects(providers: readonly string[]): Promise<Map<string, Suspects>> {
    const each = await this.shards.all((s) => s.suspects(providers));
    return new Map(
      providers.map((p) => {
        const found = each.map((m) => m.get(p) ?? { count: 0, event: null });
        const events = found.flatMap((f) => (f.event ? [f.event] : []));
        const newest = events.sort((a, b) => (a.at < b.at ? 1 : -1))[0];
        const of = events.filter((e) => e.at === newest?.at).reduce((n, e) => n + e.of, 0);
        return [p, { count: found.reduce((n, f) => n + f.count, 0), event: newest ? { ...newest, of } : null }];
      }),
    );
  }

  /** Up to `max` of them, gathered from every shard (each asked for `max`). */
  async suspectSample(provider: string, max: number): Promise<string[]> {
    return (await this.shards.all((s) => s.suspectSample(provider, max))).flat().slice(0, Math.max(0, max));
  }

  /** Alive only while every shard's sentinel is: one master restarted empty is the queue forgetting its shards. */
  async alive(): Promise<boolean> {
    return (await this.shards.all((s) => s.alive())).every(Boolean);
  }

  async forgottenShards(): Promise<{ lost: string[]; of: number }> {
    const alive = await this.shards.all((s) => s.alive());
    return { lost: this.names.filter((_, i) => !alive[i]), of: this.shards.count };
  }

  async markAlive(now: Date): Promise<void> {
    await this.shards.all((s) => s.markAlive(now));
  }

  async forgot(): Promise<boolean> {
    return (await this.shards.all((s) => s.forgot())).some(Boolean);
  }

  setStoreOutage(outage: Pause | null, ttlMs?: number): Promise<void> {
    return this.shards.home.setStoreOutage(outage, ttlMs);
  }

  storeOutage(): Promise<Pause | null> {
    return this.shards.home.storeOutage();
  }
}
