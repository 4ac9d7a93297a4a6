/**
 * The consumers of one contributions file in brief, as the sync holds them between reading the
 * file and delivering what changed: per consumer its key and the 17 bytes of its spec's digest
 * (`spec-digest.ts`), in the order of the file's list (a consumer's place is its index here).
 * Kept as a list of keys and one byte array, not an object and a string per consumer.
 */
import { DIGEST_BYTES, digestText } from './spec-digest.js';

/**
 * One declared consumer in brief, as the sync keeps it between reading a file and delivering
 * what changed: what tells its spec from another's (`spec-digest.ts`), and its place.
 */
export interface DeclaredBrief {
  key: string;
  digest: string;
  /** Its item's index in `consumers:`. */
  index: number;
}

export class DeclaredBriefs {
  private readonly keys: string[] = [];
  private digests = new Uint8Array(DIGEST_BYTES * 1024);

  get length(): number {
    return this.keys.length;
  }

  /** Adds the next consumer: its key, and its digest's bytes. */
  push(key: string, digest: Uint8Array): void {
    const at = this.keys.length * DIGEST_BYTES;
    if (at + DIGEST_BYTES > this.digests.length) {
      const larger = new Uint8Array(this.digests.length * 2);
      larger.set(this.digests);
      this.digests = larger;
    }
    this.digests.set(digest.subarray(0, DIGEST_BYTES), at);
    this.keys.push(key);
  }

  key(index: number): string {
    return this.keys[index]!;
  }

  /** The digest of consumer `index`, as `specDigest` says it. */
  digest(index: number): string {
    return digestText(this.digests.subarray(index * DIGEST_BYTES, (index + 1) * DIGEST_BYTES));
  }

  at(index: number): DeclaredBrief {
    return { key: this.key(index), digest: this.digest(index), index };
  }

  toArray(): DeclaredBrief[] {
    return this.keys.map((_, index) => this.at(index));
  }
}
