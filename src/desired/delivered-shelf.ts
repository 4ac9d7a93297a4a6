/**
 * What the desired-state sync last delivered to one provider's consumers, kept for the life of the process: per
 * consumer the 17 bytes of its spec's digest (`spec-digest.ts`) and the login it claims on the backend. One map of
 * key → slot, one byte array of digests and one array of logins, not two maps of strings: at 10,000 consumers the two
 * maps held 164 bytes a consumer (the digest a 22-character string, two map entries), and this is the one structure of
 * the engine that grows with every consumer declared.
 *
 * A consumer may claim a login without a digest delivered: a record being removed still claims its login until it is
 * gone ({@link remember} with no digest), and is not among the delivered ({@link has}, {@link keys}, {@link size}).
 */
import { DIGEST_BYTES, digestText } from './spec-digest.js';

/** What a change is judged against: the digest last delivered per consumer (a `ReadonlyMap` is one too). */
export interface DeliveredDigests {
  get(key: string): string | undefined;
  keys(): Iterable<string>;
  readonly size: number;
}

/** The first byte of a slot holding no digest (a digest's first byte is 0 or 1). */
const NONE = 2;

export class DeliveredShelf implements DeliveredDigests {
  private readonly slots = new Map<string, number>();
  private readonly logins: string[] = [];
  private digests = new Uint8Array(DIGEST_BYTES * 256);
  private readonly free: number[] = [];
  private withDigest = 0;
  private ownersView: ReadonlyMap<string, string> | undefined;
  private loginsView: ReadonlySet<string> | undefined;

  /** The consumers delivered (a digest kept). */
  get size(): number {
    return this.withDigest;
  }

  has(key: string): boolean {
    const slot = this.slots.get(key);
    return slot !== undefined && this.digests[slot * DIGEST_BYTES] !== NONE;
  }

  /** The digest delivered to `key`'s consumer, as `specDigest` says it; undefined if none. */
  get(key: string): string | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined || this.digests[slot * DIGEST_BYTES] === NONE) return undefined;
    return digestText(this.digests.subarray(slot * DIGEST_BYTES, (slot + 1) * DIGEST_BYTES));
  }

  /** The keys of the consumers delivered. */
  *keys(): IterableIterator<string> {
    for (const [key, slot] of this.slots) if (this.digests[slot * DIGEST_BYTES] !== NONE) yield key;
  }

  /** The login `key`'s consumer claims, if any. */
  login(key: string): string | undefined {
    const slot = this.slots.get(key);
    return slot === undefined ? undefined : this.logins[slot];
  }

  /** Every consumer's key and the login it claims (those being removed included). */
  *claims(): IterableIterator<[string, string]> {
    for (const [key, slot] of this.slots) yield [key, this.logins[slot]!];
  }

  /**
   * Every login claimed: made once and kept until a login changes (the orphan watch reads it at each pass); a view
   * handed out is never changed afterwards.
   */
  loginSet(): ReadonlySet<string> {
    return (this.loginsView ??= new Set(Array.from(this.slots.values(), (slot) => this.logins[slot]!)));
  }

  /**
   * Login → the consumer key that claims it, made once and kept until a login changes (the failed-logins watch reads it
   * at every pass, every `verifyEvery`: made again each time it was a seventh of the engine's CPU at 20,000 consumers
   * and a 250 ms interval); a view handed out is never changed afterwards.
   */
  owners(): ReadonlyMap<string, string> {
    if (this.ownersView === undefined) {
      const owners = new Map<string, string>();
      for (const [key, slot] of this.slots) owners.set(this.logins[slot]!, key);
      this.ownersView = owners;
    }
    return this.ownersView;
  }

  /**
   * Keeps `digest` (its {@link DIGEST_BYTES} bytes; undefined: none delivered) for `key`'s consumer, and `login` as the
   * one it claims; `login` undefined keeps the one it claimed (a refused spec keeps the accepted one's).
   */
  set(key: string, digest: Uint8Array | undefined, login: string | undefined): void {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      if (login === undefined) throw new RangeError(`no login for a consumer not claiming one: ${key}`);
      slot = this.free.pop() ?? this.slots.size;
      this.room(slot);
      this.slots.set(key, slot);
      this.digests[slot * DIGEST_BYTES] = NONE;
    }
    const at = slot * DIGEST_BYTES;
    const had = this.digests[at] !== NONE;
    if (digest === undefined) this.digests[at] = NONE;
    else this.digests.set(digest.subarray(0, DIGEST_BYTES), at);
    this.withDigest += (digest === undefined ? 0 : 1) - (had ? 1 : 0);
    if (login !== undefined && this.logins[slot] !== login) {
      this.logins[slot] = login;
      this.loginsChanged();
    }
  }

  /** Forgets `key`'s consumer: no digest, no login. */
  delete(key: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    if (this.digests[slot * DIGEST_BYTES] !== NONE) this.withDigest--;
    this.slots.delete(key);
    this.logins[slot] = '';
    this.free.push(slot);
    this.loginsChanged();
  }

  private loginsChanged(): void {
    this.ownersView = undefined;
    this.loginsView = undefined;
  }

  /** Makes the digests' array long enough for `slot`. */
  private room(slot: number): void {
    if ((slot + 1) * DIGEST_BYTES <= this.digests.length) return;
    const larger = new Uint8Array(this.digests.length * 2);
    larger.set(this.digests);
    this.digests = larger;
  }
}
