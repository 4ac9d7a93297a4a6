/**
 * Status notes, what the status reads instead of the records: each consumer's record **in
 * brief** (a {@link ConsumerSummary}) and state, each provider's consumers by when they were
 * last **asked**, each provider's **orphans** (logins under its prefix that no consumer claims,
 * as last listed) and its **confirmed removals** (the held-back change a person confirmed with
 * `holdfast confirm-removals`, for the running desired-state sync to apply).
 */
import { providerOf } from '../../store/consumer-key.js';
import { decodeSummary, encodeSummary, stateToken, type ConsumerSummary } from '../consumer-summary.js';
import { CoordinationPart } from './context.js';
import { hashFields, perProvider } from './reads.js';
import type { NotedSummary } from './scripts.js';
import { decodeJson, orphanReportCodec, type OrphanReport } from './values.js';

/** Records in brief, as their writers note them. */
export interface SummaryNotes {
  /**
   * After a record is written (or read by a sweep): its state and brief, for the status; one of
   * an older revision is ignored. A consumer becoming held counts as asked (in the provider's
   * sorted set) until its first routine check says when it was. One script per provider.
   */
  noteSummaries(entries: ReadonlyArray<readonly [key: string, summary: ConsumerSummary]>): Promise<void>;
}

/** A provider's orphans, as its listing notes them. */
export interface OrphanNotes {
  /** What the last listing of `provider`'s logins found unclaimed (an empty list clears it). */
  setOrphans(provider: string, report: OrphanReport): Promise<void>;
}

/** A held-back removal a person confirmed, as the CLI notes it and the desired-state sync uses it up. */
export interface RemovalConfirmations {
  /** A person confirms the held-back change `change` of `provider` (kept a day at most). */
  confirmRemovals(provider: string, change: string): Promise<void>;
  /** The change of `provider` a person confirmed, or null. */
  confirmedRemovals(provider: string): Promise<string | null>;
  /** The confirmation of `change` is used up (a newer confirmation is left alone). */
  clearConfirmedRemovals(provider: string, change: string): Promise<void>;
}

/** The notes, as the status reads them. */
export interface NoteReads {
  /** Every consumer's `<state> <revision>` (read the state with `summaryState`), by key. */
  allStates(): Promise<Record<string, string>>;
  /** The records in brief of `keys`; absent when unknown or unreadable. */
  summariesOf(keys: readonly string[]): Promise<Map<string, ConsumerSummary>>;
  /** When any consumer of each provider was last checked (ms since the epoch), by provider. */
  lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>>;
  /** Up to `limit` consumers of `provider` whose checks last ended before `beforeMs`, oldest first, with when. */
  checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>>;
  /** The orphans last found among `providers`. */
  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>>;
}

/** Consumers noted per script call: a sweep of 100k consumers never sends one call of them all. */
const NOTED_PER_CALL = 1000;
/** How long a confirmation is kept (s). */
const CONFIRMATION_TTL_S = 86_400;

function noted(key: string, summary: ConsumerSummary): NotedSummary {
  return { key, rev: summary.rev, state: `${stateToken(summary)} ${summary.rev}`, brief: encodeSummary(summary), heldSince: summary.state === 'held' ? summary.since : null };
}

/** The entries as the script notes them, by provider (one call per provider). */
function byProvider(entries: ReadonlyArray<readonly [key: string, summary: ConsumerSummary]>): Map<string, NotedSummary[]> {
  const out = new Map<string, NotedSummary[]>();
  for (const [key, summary] of entries) {
    const provider = providerOf(key);
    const list = out.get(provider) ?? [];
    list.push(noted(key, summary));
    out.set(provider, list);
  }
  return out;
}

/** `[member, score, member, score…]` as pairs. */
function scored(flat: readonly string[]): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
  return out;
}

/** Status notes on one connection, under one key table. */
export class Notes extends CoordinationPart implements SummaryNotes, OrphanNotes, RemovalConfirmations, NoteReads {
  async noteSummaries(entries: ReadonlyArray<readonly [key: string, summary: ConsumerSummary]>): Promise<void> {
    for (const [provider, all] of byProvider(entries)) {
      for (let i = 0; i < all.length; i += NOTED_PER_CALL) await this.scripts.run('noteSummaries', { provider, entries: all.slice(i, i + NOTED_PER_CALL) });
    }
  }

  allStates(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.states);
  }

  summariesOf(keys: readonly string[]): Promise<Map<string, ConsumerSummary>> {
    return hashFields(this.redis, this.keys.briefs, keys, decodeSummary);
  }

  async lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>> {
    const latest = await Promise.all(providers.map((p) => this.redis.zrevrange(this.keys.checked(p), 0, 0, 'WITHSCORES')));
    return new Map(providers.flatMap((p, i) => (latest[i]?.[1] === undefined ? [] : [[p, Number(latest[i][1])] as const])));
  }

  async checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>> {
    return scored(await this.redis.zrangebyscore(this.keys.checked(provider), '-inf', `(${beforeMs}`, 'WITHSCORES', 'LIMIT', 0, limit));
  }

  async setOrphans(provider: string, report: OrphanReport): Promise<void> {
    if (report.logins.length === 0) await this.redis.del(this.keys.orphans(provider));
    else await this.redis.set(this.keys.orphans(provider), JSON.stringify(report));
  }

  orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>> {
    return perProvider(this.redis, providers, this.keys.orphans, (raw) => decodeJson(orphanReportCodec, raw));
  }

  async confirmRemovals(provider: string, change: string): Promise<void> {
    await this.redis.set(this.keys.confirmRemovals(provider), change, 'EX', CONFIRMATION_TTL_S);
  }

  confirmedRemovals(provider: string): Promise<string | null> {
    return this.redis.get(this.keys.confirmRemovals(provider));
  }

  async clearConfirmedRemovals(provider: string, change: string): Promise<void> {
    if ((await this.redis.get(this.keys.confirmRemovals(provider))) === change) await this.redis.del(this.keys.confirmRemovals(provider));
  }
}
