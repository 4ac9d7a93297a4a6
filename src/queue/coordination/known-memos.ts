/**
 * Check memos known by their sealed text: a routine check's claim reads the memo its consumer's
 * last release wrote, and opening it (its seal checked, its JSON parsed and validated) was a part
 * of every check's cost. A memo is known again only when the text the queue's Redis gives back is
 * exactly one this process sealed, or opened and found sealed, before (a full string comparison):
 * whatever the seal says of that text, it says of the same text again. The memo handed out is
 * frozen, so that no reader changes what the next one gets.
 *
 * One memo per consumer, the last; at most {@link MAX_KNOWN_MEMOS} (under half a KB each): when
 * full, a consumer not known already is opened as before and not kept.
 */
import type { CheckMemo } from './values.js';

/** How many consumers' memos are known at most. */
export const MAX_KNOWN_MEMOS = 10_000;

export class KnownMemos {
  private readonly known = new Map<string, { raw: string; memo: CheckMemo }>();

  constructor(private readonly max = MAX_KNOWN_MEMOS) {}

  /** The memo `raw` says for `key`, when it is the text known for it; else undefined. */
  get(key: string, raw: string | null): CheckMemo | undefined {
    const known = this.known.get(key);
    return known !== undefined && known.raw === raw ? known.memo : undefined;
  }

  /** Keeps `memo` as what the sealed `raw` says for `key`; the memo, frozen. */
  set(key: string, raw: string, memo: CheckMemo): CheckMemo {
    const frozen = Object.freeze({ ...memo });
    if (this.known.size < this.max || this.known.has(key)) this.known.set(key, { raw, memo: frozen });
    return frozen;
  }

  forget(key: string): void {
    this.known.delete(key);
  }

  get size(): number {
    return this.known.size;
  }
}
