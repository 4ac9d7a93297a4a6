/**
 * The coordination of a sharded queue (`queue.shards: N`): one {@link Coordination} per shard,
 * each under its shard's prefix (`config/shard-prefixes.ts`), presented as one. Where each
 * entry lives, and why:
 *
 * - **in its consumer's shard** (routed by `shard-of.ts`): the lock, the revision, the check
 *   memo, the state and the brief, and the per-provider sets a script touches beside them:
 *   the asked-at sorted set (`release` and `noteSummaries` write it with the memo or the brief)
 *   and the could-not-ask set (`release`). A script's keys are all in one slot, so these sets
 *   exist once per shard and per provider, each holding that shard's consumers. Each
 *   consumer's timeline events go to its shard's stream too (they are written with its brief,
 *   and a heal of 100k consumers then spreads its writes over every master);
 * - **in every shard**: the sentinel. A master that restarts empty forgets its shards alone;
 *   the queue is alive only while every shard's sentinel is;
 * - **in the home shard (shard 0)**: what no script touches beside a consumer's keys: each
 *   provider's pause and probe, orphans and confirmed removals, and the record store's outage.
 *
 * Reads of every consumer or of a provider as a whole are fanned out over the shards and merged:
 * states, memos, briefs, asked-at times, could-not-ask sets and counts, timelines. One shard that
 * fails a read fails it whole; the status reads through {@link ShardedCoordination.withParts}
 * instead, with each shard's reads guarded, so that what the other shards answered is reported
 * and the shard that did not is named, with where it is ({@link ShardWhere}).
 *
 * One shard (the default) is the plain coordination under the configured prefix: the same keys
 * as before shards existed.
 *
 * **Changing `queue.shards`** leaves entries in shards that are no longer their consumers' (or
 * whose consumers are gone), which the fanned-out reads would take for current. So the queue's
 * layout is recorded under the prefix as configured, `<shards> <generation>` (absent: one shard,
 * generation 0), and each shard notes the generation its entries were written under: at the
 * sync's start ({@link LayoutSettling.settleLayout}, before its first sweep) a changed number of
 * shards counts the generation up, and every shard of another generation has its consumers'
 * entries cleared; the sweep that follows notes every record again. Locks are never cleared.
 */
import { Cluster } from 'ioredis';
import type { QueueRedis } from './bull-connection.js';
import { shardPrefixes } from '../config/shard-prefixes.js';
import { createCoordination, holdfastPrefix, TIMELINE_READ, type Asked, type LayoutMarks, type ShardLayout, type CheckMemo, type Claim, type Coordination, type NotedEntry, type NodesNote, type OrphanReport, type Pause, type ProviderContests } from './coordination.js';
import type { ConsumerSummary } from './consumer-summary.js';
import { keySlot } from './key-slot.js';
import { byShard, shardOf } from './shard-of.js';
import type { TimelineEvent } from './timeline-event.js';
import type { ContestedConsumer, Finding, FindingOutcome } from './contest.js';

/** What a change of `queue.shards` did to the queue's Redis. */
export interface LayoutChange {
  from: ShardLayout;
  to: ShardLayout;
  /** Shards whose consumers' entries were cleared. */
  reset: number;
}

/** The layout kept true, by the process that runs the desired-state sync. */
export interface LayoutSettling {
  /**
   * Records the configured number of shards; clears each shard's consumers' entries when they
   * were written under another layout (`providers`: whose per-provider sets to clear). Null when
   * nothing changed.
   */
  settleLayout(providers: readonly string[]): Promise<LayoutChange | null>;
  /** The layout the queue's Redis was last set up for (absent: one shard, generation 0). */
  recordedLayout(): Promise<ShardLayout>;
}

export type QueueCoordination = Coordination & LayoutSettling;

/** Where one shard is, as the status names it: its prefix, and the node that owns its slot now (`host:port`), when known. */
export interface ShardWhere {
  shard: string;
  node(): string | null;
  /** What the connection to that node said went wrong lately (a refused connect), if anything. */
  nodeError(): string | null;
}

/** A node's error is said beside its shard this long after the connection reported it (ms). */
const NODE_ERROR_RECENT_MS = 30_000;
/** Each cluster connection's last error of each node (`host:port` → when, what); as many entries as nodes at most. */
const nodeErrors = new WeakMap<Cluster, Map<string, { at: number; message: string }>>();

function nodeErrorsOf(cluster: Cluster): Map<string, { at: number; message: string }> {
  let errors = nodeErrors.get(cluster);
  if (!errors) {
    const seen = new Map<string, { at: number; message: string }>();
    cluster.on('node error', (error: Error, node: string) => seen.set(node, { at: Date.now(), message: error.message }));
    nodeErrors.set(cluster, (errors = seen));
  }
  return errors;
}

/** Where the shard of `prefix` is on `redis`: on a cluster, the master of its slot (its hash tag's) as the client last mapped it. */
function whereOf(redis: QueueRedis, prefix: string): ShardWhere {
  const slot = keySlot(holdfastPrefix(prefix));
  if (!(redis instanceof Cluster)) return { shard: prefix, node: () => `${redis.options.host ?? 'localhost'}:${redis.options.port ?? 6379}`, nodeError: () => null };
  const errors = nodeErrorsOf(redis);
  const node = () => redis.slots[slot]?.[0] ?? null;
  const nodeError = () => {
    const seen = errors.get(node() ?? '');
    return seen && Date.now() - seen.at < NODE_ERROR_RECENT_MS ? seen.message : null;
  };
  return { shard: prefix, node, nodeError };
}

/** The coordination of the queue `queue` on `redis`: sharded when `queue.shards` is more than one. */
export function queueCoordination(redis: QueueRedis, queue: { prefix: string; shards: number }): QueueCoordination {
  const base = createCoordination(redis, holdfastPrefix(queue.prefix));
  const prefixes = shardPrefixes(queue.prefix, queue.shards);
  const parts = prefixes.length === 1 ? [base] : prefixes.map((prefix) => createCoordination(redis, holdfastPrefix(prefix)));
  const coordination: Coordination = parts.length === 1 ? base : new ShardedCoordination(parts, prefixes.map((prefix) => whereOf(redis, prefix)));
  /** The layout this process settled (the sync's), written again whenever the sentinel is: a queue flushed forgets it too. */
  let settled: ShardLayout | undefined;
  const markAlive = coordination.markAlive.bind(coordination);
  const layout: LayoutSettling & Pick<Coordination, 'markAlive'> = {
    settleLayout: async (providers) => {
      const change = await settle(base, parts, providers);
      settled = change?.to ?? (await base.layout());
      return change;
    },
    recordedLayout: () => base.layout(),
    markAlive: async (now) => {
      await markAlive(now);
      if (settled && settled.generation > 0) await Promise.all([base.recordLayout(settled), ...parts.map((p) => p.markShardGeneration(settled!.generation))]);
    },
  };
  return parts.length === 1 ? { ...base, ...layout } : Object.assign(coordination, layout);
}

async function settle(base: LayoutMarks, shards: readonly LayoutMarks[], providers: readonly string[]): Promise<LayoutChange | null> {
  const from = await base.layout();
  const to = from.shards === shards.length ? from : { shards: shards.length, generation: from.generation + 1 };
  let reset = 0;
  for (const shard of shards) {
    if ((await shard.shardGeneration()) === to.generation) continue;
    await shard.resetShard(to.generation, providers);
    reset++;
  }
  // recorded last: a start interrupted before this clears again
  if (to !== from) await base.recordLayout(to);
  return to === from && reset === 0 ? null : { from, to, reset };
}

/** Maps merged, the later winning (the shards' keys do not overlap). */
function merged<K, V>(maps: ReadonlyArray<Map<K, V>>): Map<K, V> {
  return new Map(maps.flatMap((m) => [...m]));
}

/** Every shard's coordination as one. */
export class ShardedCoordination implements Coordination {
  /**
   * How many consumers of each provider each shard's asked-at set held when last told (what
   * `release` replies): their sum is the provider's, what paces its deep checks.
   */
  private readonly asked = new Map<string, Array<number | undefined>>();

  constructor(
    private readonly shards: readonly Coordination[],
    /** Where each shard is, in the same order (unnamed when not given). */
    private readonly where: readonly ShardWhere[] = shards.map((_, i) => ({ shard: `shard ${i}`, node: () => null, nodeError: () => null })),
  ) {}

  /** The same shards, each seen through `part` (the status guards each shard's reads), merged alike. */
  withParts(part: (shard: Coordination, where: ShardWhere, index: number) => Coordination): ShardedCoordination {
    return new ShardedCoordination(this.shards.map((shard, i) => part(shard, this.where[i]!, i)), this.where);
  }

  private of(key: string): Coordination {
    return this.shards[shardOf(key, this.shards.length)]!;
  }

  private get home(): Coordination {
    return this.shards[0]!;
  }

  /** `items` by the shard of each one's key, as `[shard's coordination, items]`. */
  private byShard<T>(items: readonly T[], keyOf: (item: T) => string): Array<[Coordination, T[]]> {
    return [...byShard(items, keyOf, this.shards.length)].map(([shard, list]) => [this.shards[shard]!, list]);
  }

  private all<T>(read: (shard: Coordination) => Promise<T>): Promise<T[]> {
    return Promise.all(this.shards.map(read));
  }

  claim(key: string, token: string, ttlMs: number): Promise<Claim | null> {
    return this.of(key).claim(key, token, ttlMs);
  }

  extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return this.of(key).extend(key, token, ttlMs);
  }

  async release(key: string, provider: string, token: string, memo?: CheckMemo, asked?: Asked): Promise<number | undefined> {
    const shard = shardOf(key, this.shards.length);
    const count = await this.shards[shard]!.release(key, provider, token, memo, asked);
    if (count === undefined) return undefined;
    const counts = this.asked.get(provider) ?? Array.from({ length: this.shards.length }, () => undefined);
    counts[shard] = count;
    this.asked.set(provider, counts);
    return estimatedTotal(counts);
  }

  forgetRevision(key: string): Promise<void> {
    return this.of(key).forgetRevision(key);
  }

  rememberRevision(key: string, rev: number): Promise<void> {
    return this.of(key).rememberRevision(key, rev);
  }

  forgetConsumer(key: string, provider: string): Promise<void> {
    return this.of(key).forgetConsumer(key, provider);
  }

  markRemoved(key: string, at: number): Promise<void> {
    return this.of(key).markRemoved(key, at);
  }

  clearRemoved(key: string): Promise<void> {
    return this.of(key).clearRemoved(key);
  }

  async checkMemos(keys: readonly string[]): Promise<Map<string, CheckMemo>> {
    return merged(await Promise.all(this.byShard(keys, (k) => k).map(([shard, list]) => shard.checkMemos(list))));
  }

  pauseOf(provider: string): Promise<Pause | null> {
    return this.home.pauseOf(provider);
  }

  pauseProvider(provider: string, pause: Pause): Promise<boolean> {
    return this.home.pauseProvider(provider, pause);
  }

  unpauseProvider(provider: string): Promise<boolean> {
    return this.home.unpauseProvider(provider);
  }

  takeProbe(provider: string, ms: number): Promise<boolean> {
    return this.home.takeProbe(provider, ms);
  }

  pauses(providers: readonly string[]): Promise<Map<string, Pause>> {
    return this.home.pauses(providers);
  }

  async oneCouldNotAsk(provider: string): Promise<string | null> {
    return (await this.all((s) => s.oneCouldNotAsk(provider))).find((key) => key !== null) ?? null;
  }

  async takeCouldNotAsk(provider: string): Promise<string[]> {
    return (await this.all((s) => s.takeCouldNotAsk(provider))).flat();
  }

  async couldNotAskCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await this.all((s) => s.couldNotAskCounts(providers));
    return new Map(providers.map((p) => [p, counts.reduce((sum, c) => sum + (c.get(p) ?? 0), 0)]));
  }

  /** Alive only while every shard's sentinel is: one master restarted empty is the queue forgetting its shards. */
  async alive(): Promise<boolean> {
    return (await this.all((s) => s.alive())).every(Boolean);
  }

  async forgottenShards(): Promise<{ lost: string[]; of: number }> {
    const alive = await this.all((s) => s.alive());
    return { lost: this.where.filter((_, i) => !alive[i]).map((w) => w.shard), of: this.shards.length };
  }

  async markAlive(now: Date): Promise<void> {
    await this.all((s) => s.markAlive(now));
  }

  async forgot(): Promise<boolean> {
    return (await this.all((s) => s.forgot())).some(Boolean);
  }

  setStoreOutage(outage: Pause | null, ttlMs?: number): Promise<void> {
    return this.home.setStoreOutage(outage, ttlMs);
  }

  storeOutage(): Promise<Pause | null> {
    return this.home.storeOutage();
  }

  async noteSummaries(entries: ReadonlyArray<NotedEntry>): Promise<void> {
    await Promise.all(this.byShard(entries, ([key]) => key).map(([shard, list]) => shard.noteSummaries(list)));
  }

  async noteTimeline(events: readonly TimelineEvent[], finding?: Finding): Promise<FindingOutcome | undefined> {
    const counting = finding ? this.of(finding.key) : undefined;
    const groups = this.byShard(events, (e) => e.key);
    if (counting && !groups.some(([shard]) => shard === counting)) groups.push([counting, []]);
    const outcomes = await Promise.all(groups.map(([shard, list]) => shard.noteTimeline(list, shard === counting ? finding : undefined)));
    return outcomes.find((o) => o !== undefined);
  }

  setOrphans(provider: string, report: OrphanReport): Promise<void> {
    return this.home.setOrphans(provider, report);
  }

  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>> {
    return this.home.orphans(providers);
  }

  setNodes(provider: string, note: NodesNote, ttlMs: number): Promise<void> {
    return this.home.setNodes(provider, note, ttlMs);
  }

  nodes(providers: readonly string[]): Promise<Map<string, NodesNote>> {
    return this.home.nodes(providers);
  }

  confirmRemovals(provider: string, change: string): Promise<void> {
    return this.home.confirmRemovals(provider, change);
  }

  confirmedRemovals(provider: string): Promise<string | null> {
    return this.home.confirmedRemovals(provider);
  }

  clearConfirmedRemovals(provider: string, change: string): Promise<void> {
    return this.home.clearConfirmedRemovals(provider, change);
  }

  async allStates(): Promise<Record<string, string>> {
    return Object.assign({}, ...(await this.all((s) => s.allStates()))) as Record<string, string>;
  }

  async summariesOf(keys: readonly string[]): Promise<Map<string, ConsumerSummary>> {
    return merged(await Promise.all(this.byShard(keys, (k) => k).map(([shard, list]) => shard.summariesOf(list))));
  }

  async lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>> {
    const latest = new Map<string, number>();
    for (const shard of await this.all((s) => s.lastCheckedAt(providers))) for (const [p, at] of shard) latest.set(p, Math.max(at, latest.get(p) ?? at));
    return latest;
  }

  async checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>> {
    const each = await this.all((s) => s.checkedBefore(provider, beforeMs, limit));
    return each.flat().sort((a, b) => a[1] - b[1]).slice(0, limit);
  }

  /** Every shard's contested consumers of each provider, counted and merged (those whose contest ends first listed). */
  async contested(providers: readonly string[], nowMs: number, limit: number): Promise<Map<string, ProviderContests>> {
    const each = await this.all((s) => s.contested(providers, nowMs, limit));
    return new Map(providers.map((p) => {
      const parts = each.map((m) => m.get(p) ?? { count: 0, listed: [] });
      const listed = parts.flatMap((x) => x.listed).sort((a, b) => a.until - b.until).slice(0, limit);
      return [p, { count: parts.reduce((n, x) => n + x.count, 0), listed }];
    }));
  }

  contestOf(key: string, nowMs: number): Promise<ContestedConsumer | null> {
    return this.of(key).contestOf(key, nowMs);
  }

  /** Every shard's events of `provider`, oldest first, the newest `TIMELINE_READ` at most. */
  async timeline(provider: string, sinceMs: number): Promise<TimelineEvent[]> {
    const each = await this.all((s) => s.timeline(provider, sinceMs));
    return each.flat().sort((a, b) => a.at - b.at).slice(-TIMELINE_READ);
  }
}

/** A provider's consumers across shards: the shards heard from, and as many again as their mean for each not heard from yet. */
function estimatedTotal(counts: ReadonlyArray<number | undefined>): number {
  const known = counts.filter((c): c is number => c !== undefined);
  const sum = known.reduce((a, b) => a + b, 0);
  return Math.round(sum + (counts.length - known.length) * (sum / known.length));
}
