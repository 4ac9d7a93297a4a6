/**
 * The notes of a sharded queue (`../sharded-coordination.ts`): each consumer's brief, state,
 * asked-at time and timeline events in its shard, read over every shard and merged; orphans,
 * backend nodes, failed logins and confirmed removals in the home shard.
 */
import {
  TIMELINE_READ,
  type FailedLoginsNote,
  type NotedEntry,
  type NotedStates,
  type NodesNote,
  type NotesPart,
  type OrphanReport,
  type RemovalConfirmation,
} from '../coordination.js';
import type { ConsumerBrief } from '../consumer-brief.js';
import type { Finding, FindingOutcome } from '../contest.js';
import type { TimelineEvent } from '../timeline-event.js';
import { merged, type Shards } from './shards.js';

export class ShardedNotes implements NotesPart {
  constructor(private readonly shards: Shards<NotesPart>) {}

  async noteBriefs(entries: ReadonlyArray<NotedEntry>): Promise<void> {
    await Promise.all(this.shards.byShard(entries, ([key]) => key).map(([shard, list]) => shard.noteBriefs(list)));
  }

  async noteTimeline(events: readonly TimelineEvent[], finding?: Finding): Promise<FindingOutcome | undefined> {
    const counting = finding ? this.shards.of(finding.key) : undefined;
    const groups = this.shards.byShard(events, (e) => e.key);
    if (counting && !groups.some(([shard]) => shard === counting)) groups.push([counting, []]);
    const outcomes = await Promise.all(
      groups.map(([shard, list]) => shard.noteTimeline(list, shard === counting ? finding : undefined)),
    );
    return outcomes.find((o) => o !== undefined);
  }

  setOrphans(provider: string, report: OrphanReport): Promise<void> {
    return this.shards.home.setOrphans(provider, report);
  }

  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>> {
    return this.shards.home.orphans(providers);
  }

  setNodes(provider: string, note: NodesNote, ttlMs: number): Promise<void> {
    return this.shards.home.setNodes(provider, note, ttlMs);
  }

  nodes(providers: readonly string[]): Promise<Map<string, NodesNote>> {
    return this.shards.home.nodes(providers);
  }

  setFailedLogins(provider: string, note: FailedLoginsNote, ttlMs: number): Promise<void> {
    return this.shards.home.setFailedLogins(provider, note, ttlMs);
  }

  failedLogins(providers: readonly string[]): Promise<Map<string, FailedLoginsNote>> {
    return this.shards.home.failedLogins(providers);
  }

  confirmRemovals(provider: string, confirmation: RemovalConfirmation): Promise<void> {
    return this.shards.home.confirmRemovals(provider, confirmation);
  }

  confirmedRemovals(provider: string): Promise<RemovalConfirmation | 'unsealed' | null> {
    return this.shards.home.confirmedRemovals(provider);
  }

  clearConfirmedRemovals(provider: string, change: string): Promise<void> {
    return this.shards.home.clearConfirmedRemovals(provider, change);
  }

  async allStates(): Promise<NotedStates> {
    const each = await this.shards.all((s) => s.allStates());
    return {
      states: Object.assign({}, ...each.map((e) => e.states)) as Record<string, string>,
      unsealed: each.flatMap((e) => e.unsealed),
    };
  }

  async briefsOf(keys: readonly string[]): Promise<Map<string, ConsumerBrief>> {
    return merged(await Promise.all(this.shards.byShard(keys, (k) => k).map(([shard, list]) => shard.briefsOf(list))));
  }

  async lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>> {
    const latest = new Map<string, number>();
    for (const shard of await this.shards.all((s) => s.lastCheckedAt(providers)))
      for (const [p, at] of shard) latest.set(p, Math.max(at, latest.get(p) ?? at));
    return latest;
  }

  async askedCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await this.shards.all((s) => s.askedCounts(providers));
    return new Map(providers.map((p) => [p, counts.reduce((sum, c) => sum + (c.get(p) ?? 0), 0)]));
  }

  async checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>> {
    const each = await this.shards.all((s) => s.checkedBefore(provider, beforeMs, limit));
    return each
      .flat()
      .sort((a, b) => a[1] - b[1])
      .slice(0, limit);
  }

  /** Every shard's events of `provider`, oldest first, the newest `TIMELINE_READ` at most. */
  async timeline(provider: string, sinceMs: number): Promise<TimelineEvent[]> {
    const each = await this.shards.all((s) => s.timeline(provider, sinceMs));
    return each
      .flat()
      .sort((a, b) => a.at - b.at)
      .slice(-TIMELINE_READ);
  }
}
