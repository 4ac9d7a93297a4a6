/**
 * Locks and check memos: each consumer's lock (one actor at a time; a field of one hash per
 * shard, so that a turn's claims or releases are one script call of a few commands, not a few
 * per consumer; it ends by itself when its holder dies, by the queue's Redis clock), its record
 * revision as last written (so a routine check tells a current wait from a stale one without
 * reading the store) and what its checks learned (so a check
 * that finds it held writes nothing to the store). A memo is sealed (`../note-seal.ts`): one whose
 * seal fails reads as none (the next check is deep; nothing is applied for it).
 */
import type { NoteSeal } from '../note-seal.js';
import { CoordinationPart, type CoordinationContext } from './context.js';
import { consumerEntries } from './keys.js';
import { KnownMemos } from './known-memos.js';
import { hashFields } from './reads.js';
import type { ClaimReply, ReleaseEntry, ReleaseReply } from './scripts.js';
import { TurnBatch } from './turn-batch.js';
import { checkMemoCodec, decodeJson, decodeRevision, type CheckMemo } from './values.js';

/**
 * How long a removal's mark is kept (ms): far longer than a desired job waits in the queue (put
 * back while its consumer is busy, a few hundred ms at a time, or while the store does not
 * answer). An older job (or a mark the queue's Redis forgot) is the sweep's to repair:
 * it removes any record whose key is no longer declared (`DesiredSync.removeUndeclared`).
 */
export const REMOVAL_MARK_MS = 24 * 3_600_000;

/** The most claims or releases one script call carries (its KEYS and ARGV grow with them; Lua's `unpack` is bounded). */
const MAX_AT_ONCE = 1_000;

/** A consumer's lock, taken: what the queue's Redis knows of it. */
export interface Claim {
  /** The record's revision as last written, or null when unknown (never written, forgotten, or unreadable). */
  rev: number | null;
  memo: CheckMemo | null;
  /** When the sync read the consumer's last removal (ms), while its mark is kept; null: none known. */
  removedAt: number | null;
}

/** What a released claim says about the consumer being asked on its provider. */
export type Asked = 'asked' | 'could-not-ask' | undefined;

/** What a lock's release tells its holder. */
export interface Released {
  /** How many of the provider's consumers have been asked about (what paces its deep checks); undefined: not known. */
  askedAbout: number | undefined;
  /**
   * The consumer is still suspect: its run began asking before the provider's last node event was seen, so what it
   * found says nothing of the node since. Its routine wait is due again at once (the release brought it forward when
   * it was in the due set; a wait settled after the release is settled due now).
   */
  suspect: boolean;
}

/** A consumer's lock, as a job takes, keeps and releases it. */
export interface ConsumerLocks {
  /** Takes the consumer's lock for `ttlMs` under `token`; null when another worker holds it. */
  claim(key: string, token: string, ttlMs: number): Promise<Claim | null>;
  /** Extends a lock this token holds; false when it expired (and someone else may hold it). */
  extend(key: string, token: string, ttlMs: number): Promise<boolean>;
  /**
   * Releases the lock (if still this token's), keeping what a check learned and whether the provider answered, and
   * `askedAt`, when the run began asking (ms, before its lock was claimed): a consumer asked is no longer suspect
   * unless that was before its provider's last node event (or is not told).
   */
  release(
    key: string,
    provider: string,
    token: string,
    memo?: CheckMemo,
    asked?: Asked,
    askedAt?: number,
  ): Promise<Released>;
}

/** A lock to take, as {@link BatchLocks.claimMany} takes many. */
export interface LockClaim {
  key: string;
  token: string;
  ttlMs: number;
}

/** A lock to release, with what its check learned, as {@link BatchLocks.releaseMany} releases many. */
export interface LockRelease {
  key: string;
  provider: string;
  token: string;
  memo?: CheckMemo | undefined;
  asked?: Asked;
  /** When its run began asking (ms, before its lock was claimed). */
  askedAt?: number | undefined;
}

/**
 * The locks of a round's consumers, taken and released together: one script call and one promise for the lot, not
 * one each joined in a turn (`turn-batch.ts`). What each consumer is told is what {@link ConsumerLocks} tells it.
 */
export interface BatchLocks {
  /** Each lock as {@link ConsumerLocks.claim} takes it, in order. */
  claimMany(claims: readonly LockClaim[]): Promise<Array<Claim | null>>;
  /** Each lock as {@link ConsumerLocks.release} releases it, in order; what each release replies. */
  releaseMany(releases: readonly LockRelease[]): Promise<Released[]>;
}

/** A consumer's revision, as its record writes leave it. */
export interface RevisionNotes {
  /** Before a record is written: its revision is unknown until {@link rememberRevision}. */
  forgetRevision(key: string): Promise<void>;
  /** After a record is written (and its wait job scheduled). */
  rememberRevision(key: string, rev: number): Promise<void>;
  /** A consumer removed for good: nothing of it stays (but its removal's mark). */
  forgetConsumer(key: string, provider: string): Promise<void>;
  /**
   * Before a consumer's record is deleted, or when a removal finds none: the removal, read by
   * the sync at `at` (ms), is marked for {@link REMOVAL_MARK_MS} (a later mark is kept). Every
   * claim tells it, and no desired spec read before it makes the record again.
   */
  markRemoved(key: string, at: number): Promise<void>;
  /** A newer spec made the record again: its removal's mark is not needed any more. */
  clearRemoved(key: string): Promise<void>;
}

/** What checks learned, for whoever reports on them. */
export interface MemoReads {
  /** What the checks of `keys` learned (absent when nothing, or nothing readable, is known). */
  checkMemos(keys: readonly string[]): Promise<Map<string, CheckMemo>>;
}

/**
 * The locks part of coordination (`coordination.locks`): every slice above, as one shard or a sharded queue serves it.
 */
export interface LocksPart extends ConsumerLocks, BatchLocks, RevisionNotes, MemoReads {}

/** Locks and check memos on one connection, under one key table. */
export class Locks extends CoordinationPart implements LocksPart {
  constructor(
    context: CoordinationContext,
    private readonly seal: NoteSeal,
  ) {
    super(context);
  }

  /** The memos this process sealed or opened last, by consumer: a claim that reads one back does not open it again. */
  private readonly knownMemos = new KnownMemos();

  /** The memo holdfast sealed for `key` (null: none, or one holdfast did not write). */
  private readonly decodeMemo = (key: string, raw: string | null): CheckMemo | null => {
    const known = this.knownMemos.get(key, raw);
    if (known) return known;
    const memo = decodeJson(checkMemoCodec, this.seal.open('memo', key, raw));
    return memo && raw ? this.knownMemos.set(key, raw, memo) : memo;
  };

  /** The claims and releases of one turn of the event loop, one script call each (`turn-batch.ts`). */
  private readonly claims = new TurnBatch<{ key: string; token: string; ttlMs: number }, ClaimReply>((claims) =>
    this.scripts.run('claim', { claims }),
  );
  private readonly releases = new TurnBatch<ReleaseEntry, ReleaseReply>((releases) =>
    this.scripts.run('release', { releases }),
  );

  async claim(key: string, token: string, ttlMs: number): Promise<Claim | null> {
    return this.claimOf(key, await this.claims.call({ key, token, ttlMs }));
  }

  async claimMany(claims: readonly LockClaim[]): Promise<Array<Claim | null>> {
    const replies: ClaimReply[] = [];
    for (let i = 0; i < claims.length; i += MAX_AT_ONCE)
      replies.push(...(await this.scripts.run('claim', { claims: claims.slice(i, i + MAX_AT_ONCE) })));
    const out: Array<Claim | null> = new Array<Claim | null>(claims.length);
    for (let i = 0; i < claims.length; i++) out[i] = replies[i] ? this.claimOf(claims[i]!.key, replies[i]!) : null;
    return out;
  }

  /** A claim's reply as the consumer is told it. */
  private claimOf(key: string, { taken, rev, memo, removed }: ClaimReply): Claim | null {
    // a mark is a time in ms, a whole number as a revision is
    return taken
      ? { rev: decodeRevision(rev), memo: this.decodeMemo(key, memo), removedAt: decodeRevision(removed) }
      : null;
  }

  extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return this.scripts.run('extend', { key, token, ttlMs });
  }

  async release(
    key: string,
    provider: string,
    token: string,
    memo?: CheckMemo,
    asked?: Asked,
    askedAt?: number,
  ): Promise<Released> {
    return releasedOf(await this.releases.call(this.releaseOf({ key, provider, token, memo, asked, askedAt })));
  }

  async releaseMany(releases: readonly LockRelease[]): Promise<Released[]> {
    const entries = releases.map((release) => this.releaseOf(release));
    const out: Released[] = [];
    for (let i = 0; i < entries.length; i += MAX_AT_ONCE)
      out.push(...(await this.scripts.run('release', { releases: entries.slice(i, i + MAX_AT_ONCE) })).map(releasedOf));
    return out;
  }

  /** A release as the script takes it: its memo sealed (and known, so that the next claim does not open it again). */
  private releaseOf({ key, provider, token, memo, asked, askedAt }: LockRelease): ReleaseEntry {
    const sealed = memo ? this.seal.seal('memo', key, JSON.stringify(memo)) : null;
    if (memo && sealed) this.knownMemos.set(key, sealed, memo);
    return { key, provider, token, memo: sealed, memoAt: memo ? memo.at : null, asked, askedAt: askedAt ?? null };
  }

  async forgetRevision(key: string): Promise<void> {
    await this.redis.hdel(this.keys.revs, key);
  }

  async rememberRevision(key: string, rev: number): Promise<void> {
    await this.redis.hset(this.keys.revs, key, rev);
  }

  async forgetConsumer(key: string, provider: string): Promise<void> {
    this.knownMemos.forget(key);
    const { hashes, set, suspects, sortedSets } = consumerEntries(this.keys, provider);
    const multi = this.redis.multi();
    for (const hash of hashes) multi.hdel(hash, key);
    for (const sorted of sortedSets) multi.zrem(sorted, key);
    await multi.srem(set, key).srem(suspects, key).exec();
  }

  markRemoved(key: string, at: number): Promise<void> {
    return this.scripts.run('markRemoved', { key, at, ttlMs: REMOVAL_MARK_MS });
  }

  async clearRemoved(key: string): Promise<void> {
    await this.redis.del(this.keys.removed(key));
  }

  checkMemos(keys: readonly string[]): Promise<Map<string, CheckMemo>> {
    return hashFields(this.redis, this.keys.memos, keys, (raw, key) => this.decodeMemo(key, raw));
  }
}

/** A release's reply as its holder is told it. */
function releasedOf({ count, suspect }: ReleaseReply): Released {
  return { askedAbout: count, suspect };
}
