/**
 * What workers share besides jobs, in the queue's Redis, and all of holdfast's own knowledge
 * of it (BullMQ keeps its own):
 *
 * - each consumer's **lock**: one actor at a time; it expires by itself when its holder dies;
 * - each consumer's **revision**: the record's, as last written, so a routine check can tell
 *   a current timer from a stale one without reading the store;
 * - what each consumer's checks **learned** (a {@link CheckMemo}), so a check that finds the
 *   consumer held writes nothing to the store;
 * - the consumers each provider **could not be asked** about, to ask them again promptly
 *   when it answers;
 * - each provider's **pause** (its checks timed out) and the one probe a pause lets through;
 * - a **sentinel** whose absence says the queue's Redis forgot everything;
 * - the record store's **outage**, as a worker's watch last saw it (it expires by itself);
 * - each provider's **orphans**: logins under its prefix that no consumer claims, as last listed;
 * - each provider's **confirmed removals**: the held-back change a person confirmed with
 *   `holdfast confirm-removals`, for the running desired-state sync to apply.
 * - each consumer's record **in brief** (a {@link ConsumerSummary}), and each provider's
 *   consumers by when they were last **checked**, so the status reads no record to count them,
 *   list the unserved and find the ones nobody asked about for too long.
 *
 * With a Redis Cluster, give the queue a hash-tagged prefix (`{holdfast}`): every key here
 * starts with it, so each script's keys share a slot.
 */
import type { Redis } from 'ioredis';
import type { LastCheck } from '../store/consumer-record.js';
import { encodeSummary, stateToken, type ConsumerSummary } from './consumer-summary.js';

/** What a consumer's checks learned, kept between checks without touching the store. */
export interface CheckMemo {
  /** When the last check ended (ms since the epoch). */
  at: number;
  outcome: LastCheck['outcome'];
  detail: string | null;
  /** The record revision the check ran at. */
  epoch: number;
  /** When the last deep check ended (ms since the epoch), or null when there was none. */
  deepAt: number | null;
}

/** Why and since when a provider's checks are paused. */
export interface Pause {
  since: string;
  reason: string;
}

/** Logins on a provider's backend under its orphan prefix that no consumer claims. */
export interface OrphanReport {
  at: string;
  prefix: string;
  logins: string[];
}

/** A consumer's lock, taken: what the queue's Redis knows of it. */
export interface Claim {
  /** The record's revision as last written, or null when unknown (never written, or forgotten). */
  rev: number | null;
  memo: CheckMemo | null;
}

/** What a released claim says about the consumer being asked on its provider. */
export type Asked = 'asked' | 'could-not-ask' | undefined;

const CLAIM = `
if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  return {1, redis.call('hget', KEYS[2], ARGV[3]), redis.call('hget', KEYS[3], ARGV[3])}
end
return {0}`;

const EXTEND = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0`;

const RELEASE = `
if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end
if ARGV[3] ~= '' then redis.call('hset', KEYS[2], ARGV[2], ARGV[3]) end
if ARGV[4] == 'could-not-ask' then redis.call('sadd', KEYS[3], ARGV[2]) elseif ARGV[4] == 'asked' then redis.call('srem', KEYS[3], ARGV[2]) end
if ARGV[5] ~= '' then redis.call('zadd', KEYS[4], ARGV[5], ARGV[2]) end
return 1`;

const NOTE_SUMMARIES = `
for i = 1, #ARGV, 5 do
  local old = redis.call('hget', KEYS[1], ARGV[i])
  local rev = old and tonumber(string.match(old, '^%S+ (%d+)$'))
  if not rev or rev <= tonumber(ARGV[i + 1]) then
    redis.call('hset', KEYS[1], ARGV[i], ARGV[i + 2])
    redis.call('hset', KEYS[2], ARGV[i], ARGV[i + 3])
    if ARGV[i + 4] ~= '' then
      local asked = tonumber(redis.call('zscore', KEYS[3], ARGV[i]))
      if not asked or asked < tonumber(ARGV[i + 4]) then redis.call('zadd', KEYS[3], ARGV[i + 4], ARGV[i]) end
    end
  end
end
return 1`;

const TAKE_ALL = `
local members = redis.call('smembers', KEYS[1])
redis.call('del', KEYS[1])
return members`;

type Scripts = Redis & {
  hfClaim(lock: string, revs: string, memos: string, token: string, ttlMs: number, key: string): Promise<[number, string | null, string | null]>;
  hfExtend(lock: string, token: string, ttlMs: number): Promise<number>;
  hfRelease(lock: string, memos: string, couldNotAsk: string, checked: string, token: string, key: string, memo: string, asked: string, at: string): Promise<number>;
  hfTakeAll(set: string): Promise<string[]>;
  hfNoteSummaries(states: string, briefs: string, checked: string, ...keyRevStateBriefHeld: Array<string | number>): Promise<number>;
};

export class Coordination {
  private readonly redis: Scripts;
  private aliveSeen: { at: number; alive: Promise<boolean> } | undefined;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('hfClaim', { numberOfKeys: 3, lua: CLAIM });
    redis.defineCommand('hfExtend', { numberOfKeys: 1, lua: EXTEND });
    redis.defineCommand('hfRelease', { numberOfKeys: 4, lua: RELEASE });
    redis.defineCommand('hfTakeAll', { numberOfKeys: 1, lua: TAKE_ALL });
    redis.defineCommand('hfNoteSummaries', { numberOfKeys: 3, lua: NOTE_SUMMARIES });
    this.redis = redis as Scripts;
  }

  private lockKey(key: string): string {
    return `${this.prefix}:lock:${key}`;
  }

  private get revs(): string {
    return `${this.prefix}:revs`;
  }

  private get memos(): string {
    return `${this.prefix}:checks`;
  }

  private couldNotAskKey(provider: string): string {
    return `${this.prefix}:could-not-ask:${provider}`;
  }

  private pausedKey(provider: string): string {
    return `${this.prefix}:paused:${provider}`;
  }

  /** Each consumer's `<state> <revision>`: all the status reads of every consumer. */
  private get states(): string {
    return `${this.prefix}:states`;
  }

  /** Each consumer's record in brief, encoded (see `consumer-summary.ts`): read for the consumers listed. */
  private get briefs(): string {
    return `${this.prefix}:briefs`;
  }

  /** The provider's consumers by when their checks last ended (a sorted set): the status finds the silent ones without reading every memo. */
  private checkedKey(provider: string): string {
    return `${this.prefix}:checked:${provider}`;
  }

  private get sentinel(): string {
    return `${this.prefix}:alive`;
  }

  /** Takes the consumer's lock for `ttlMs` under `token`; null when another worker holds it. */
  async claim(key: string, token: string, ttlMs: number): Promise<Claim | null> {
    const [taken, rev, memo] = await this.redis.hfClaim(this.lockKey(key), this.revs, this.memos, token, ttlMs, key);
    if (taken !== 1) return null;
    return { rev: rev === null || rev === undefined ? null : Number(rev), memo: memo ? (JSON.parse(memo) as CheckMemo) : null };
  }

  /** Extends a lock this token holds; false when it expired (and someone else may hold it). */
  async extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.hfExtend(this.lockKey(key), token, ttlMs)) === 1;
  }

  /** Releases the lock (if still this token's), keeping what a check learned and whether the provider answered. */
  async release(key: string, provider: string, token: string, memo?: CheckMemo, asked?: Asked): Promise<void> {
    await this.redis.hfRelease(
      this.lockKey(key),
      this.memos,
      this.couldNotAskKey(provider),
      this.checkedKey(provider),
      token,
      key,
      memo ? JSON.stringify(memo) : '',
      asked ?? '',
      memo ? String(memo.at) : '',
    );
  }

  /** Before a record is written: its revision is unknown until {@link rememberRevision}. */
  async forgetRevision(key: string): Promise<void> {
    await this.redis.hdel(this.revs, key);
  }

  /** After a record is written (and its timer job scheduled). */
  async rememberRevision(key: string, rev: number): Promise<void> {
    await this.redis.hset(this.revs, key, rev);
  }

  /** A consumer removed for good: nothing of it stays. */
  async forgetConsumer(key: string, provider: string): Promise<void> {
    await this.redis.multi().hdel(this.revs, key).hdel(this.memos, key).hdel(this.states, key).hdel(this.briefs, key).srem(this.couldNotAskKey(provider), key).zrem(this.checkedKey(provider), key).exec();
  }

  /**
   * After a record is written (or read by a sweep): its state and brief, for the status; one of
   * an older revision is ignored. A consumer becoming held counts as asked (in the provider's
   * sorted set) until its first routine check says when it was. One script per provider.
   */
  async noteSummaries(entries: ReadonlyArray<readonly [key: string, summary: ConsumerSummary]>): Promise<void> {
    const byProvider = new Map<string, Array<string | number>>();
    for (const [key, summary] of entries) {
      const provider = key.slice(0, key.indexOf('/'));
      const args = byProvider.get(provider) ?? [];
      args.push(key, summary.rev, `${stateToken(summary)} ${summary.rev}`, encodeSummary(summary), summary.state === 'held' ? summary.since : '');
      byProvider.set(provider, args);
    }
    for (const [provider, args] of byProvider) {
      for (let i = 0; i < args.length; i += 5000) await this.redis.hfNoteSummaries(this.states, this.briefs, this.checkedKey(provider), ...args.slice(i, i + 5000));
    }
  }

  /** Every consumer's `<state> <revision>` (read the state with `summaryState`), by key. */
  async allStates(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.states);
  }

  /** The records in brief of `keys`, encoded (see `consumer-summary.ts`); absent when unknown. */
  async summariesOf(keys: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const values = await this.redis.hmget(this.briefs, ...chunk);
      chunk.forEach((key, j) => {
        const raw = values[j];
        if (raw) out.set(key, raw);
      });
    }
    return out;
  }

  /** How many consumers of each provider were last found could-not-ask. */
  async couldNotAskCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await Promise.all(providers.map((p) => this.redis.scard(this.couldNotAskKey(p))));
    return new Map(providers.map((p, i) => [p, counts[i] ?? 0]));
  }

  /** What the checks of `keys` learned (absent when nothing is known). */
  async checkMemos(keys: readonly string[]): Promise<Map<string, CheckMemo>> {
    const out = new Map<string, CheckMemo>();
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const values = await this.redis.hmget(this.memos, ...chunk);
      chunk.forEach((key, j) => {
        const raw = values[j];
        if (raw) out.set(key, JSON.parse(raw) as CheckMemo);
      });
    }
    return out;
  }

  /** When any consumer of each provider was last checked (ms since the epoch), by provider. */
  async lastCheckedAt(providers: readonly string[]): Promise<Map<string, number>> {
    const latest = await Promise.all(providers.map((p) => this.redis.zrevrange(this.checkedKey(p), 0, 0, 'WITHSCORES')));
    return new Map(providers.flatMap((p, i) => (latest[i]?.[1] === undefined ? [] : [[p, Number(latest[i][1])] as const])));
  }

  /** Up to `limit` consumers of `provider` whose checks last ended before `beforeMs`, oldest first, with when. */
  async checkedBefore(provider: string, beforeMs: number, limit: number): Promise<Array<[key: string, at: number]>> {
    const flat = await this.redis.zrangebyscore(this.checkedKey(provider), '-inf', `(${beforeMs}`, 'WITHSCORES', 'LIMIT', 0, limit);
    const out: Array<[string, number]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
    return out;
  }

  /** One of the consumers of `provider` last found could-not-ask, or null when there is none. */
  async oneCouldNotAsk(provider: string): Promise<string | null> {
    return this.redis.srandmember(this.couldNotAskKey(provider));
  }

  /** The consumers of `provider` last found could-not-ask, removed from the set as they are returned. */
  async takeCouldNotAsk(provider: string): Promise<string[]> {
    return this.redis.hfTakeAll(this.couldNotAskKey(provider));
  }

  /** The provider's pause, or null when its checks run. */
  async pauseOf(provider: string): Promise<Pause | null> {
    const raw = await this.redis.get(this.pausedKey(provider));
    return raw ? (JSON.parse(raw) as Pause) : null;
  }

  /** Pauses the provider's checks unless they already are; true when this call paused them. */
  async pauseProvider(provider: string, pause: Pause): Promise<boolean> {
    return (await this.redis.set(this.pausedKey(provider), JSON.stringify(pause), 'NX')) === 'OK';
  }

  /** Lifts the provider's pause; true when there was one. */
  async unpauseProvider(provider: string): Promise<boolean> {
    return (await this.redis.del(this.pausedKey(provider))) > 0;
  }

  /** The one probe a paused provider lets through every `ms` (across every worker); true when this caller got it. */
  async takeProbe(provider: string, ms: number): Promise<boolean> {
    return (await this.redis.set(`${this.prefix}:probe:${provider}`, '1', 'PX', ms, 'NX')) === 'OK';
  }

  /** Every paused provider among `providers`, for the status. */
  async pauses(providers: readonly string[]): Promise<Map<string, Pause>> {
    const out = new Map<string, Pause>();
    if (providers.length === 0) return out;
    const values = await this.redis.mget(...providers.map((p) => this.pausedKey(p)));
    providers.forEach((p, i) => {
      const raw = values[i];
      if (raw) out.set(p, JSON.parse(raw) as Pause);
    });
    return out;
  }

  /** The record store does not answer (kept `ttlMs`, refreshed while it stays so); null: it answers again. */
  async setStoreOutage(outage: Pause | null, ttlMs = 5_000): Promise<void> {
    const key = `${this.prefix}:store-down`;
    if (outage) await this.redis.set(key, JSON.stringify(outage), 'PX', ttlMs);
    else await this.redis.del(key);
  }

  /** The record store's outage as a worker last saw it, or null. */
  async storeOutage(): Promise<Pause | null> {
    const raw = await this.redis.get(`${this.prefix}:store-down`);
    return raw ? (JSON.parse(raw) as Pause) : null;
  }

  private orphansKey(provider: string): string {
    return `${this.prefix}:orphans:${provider}`;
  }

  /** What the last listing of `provider`'s logins found unclaimed (an empty list clears it). */
  async setOrphans(provider: string, report: OrphanReport): Promise<void> {
    if (report.logins.length === 0) await this.redis.del(this.orphansKey(provider));
    else await this.redis.set(this.orphansKey(provider), JSON.stringify(report));
  }

  /** The orphans last found among `providers`, for the status. */
  async orphans(providers: readonly string[]): Promise<Map<string, OrphanReport>> {
    const out = new Map<string, OrphanReport>();
    if (providers.length === 0) return out;
    const values = await this.redis.mget(...providers.map((p) => this.orphansKey(p)));
    providers.forEach((p, i) => {
      const raw = values[i];
      if (raw) out.set(p, JSON.parse(raw) as OrphanReport);
    });
    return out;
  }

  private confirmKey(provider: string): string {
    return `${this.prefix}:confirm-removals:${provider}`;
  }

  /** A person confirms the held-back change `change` of `provider` (kept a day at most). */
  async confirmRemovals(provider: string, change: string): Promise<void> {
    await this.redis.set(this.confirmKey(provider), change, 'EX', 86_400);
  }

  /** The change of `provider` a person confirmed, or null. */
  async confirmedRemovals(provider: string): Promise<string | null> {
    return this.redis.get(this.confirmKey(provider));
  }

  /** The confirmation of `change` is used up (a newer confirmation is left alone). */
  async clearConfirmedRemovals(provider: string, change: string): Promise<void> {
    if ((await this.redis.get(this.confirmKey(provider))) === change) await this.redis.del(this.confirmKey(provider));
  }

  /** False when the queue's Redis has forgotten everything since {@link markAlive} (restarted empty, flushed). */
  async alive(): Promise<boolean> {
    return (await this.redis.exists(this.sentinel)) === 1;
  }

  async markAlive(now: Date): Promise<void> {
    await this.redis.set(this.sentinel, now.toISOString());
    this.aliveSeen = undefined;
  }

  /** Whether the queue's Redis forgot everything, asked at most once a second (for explaining errors). */
  forgot(): Promise<boolean> {
    const now = Date.now();
    if (!this.aliveSeen || now - this.aliveSeen.at > 1000) this.aliveSeen = { at: now, alive: this.alive().catch(() => true) };
    return this.aliveSeen.alive.then((alive) => !alive);
  }
}
