/**
 * Check memos known by their sealed text (`src/queue/coordination/known-memos.ts`): a claim that reads back the memo
 * this process sealed is not opened again; any other text (a memo put back from earlier, or written by hand) is.
 */
import { describe, expect, it } from 'vitest';
import { KnownMemos } from '../../../src/queue/coordination/known-memos.js';
import type { CheckMemo } from '../../../src/queue/coordination.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';

const seal = new NoteSeal(Buffer.alloc(32, 7));
const key = 'cache/photos';
const memo = (at: number): CheckMemo => ({ at, outcome: 'held', detail: null, rev: 3, deepAt: 1 });
const sealed = (m: CheckMemo) => seal.seal('memo', key, JSON.stringify(m));

describe('a check memo known again', () => {
  it('is the memo kept for exactly the text sealed, frozen; any other text is not known', () => {
    const known = new KnownMemos();
    const kept = known.set(key, sealed(memo(2)), memo(2));
    expect(Object.isFrozen(kept)).toBe(true);
    expect(known.get(key, sealed(memo(2)))).toEqual(memo(2));
    // an earlier memo put back (sealed by holdfast, but not the last): opened as any other, not taken for the last
    expect(known.get(key, sealed(memo(1)))).toBeUndefined();
    expect(known.get(key, null)).toBeUndefined();
    expect(known.get('cache/other', sealed(memo(2)))).toBeUndefined();
  });

  it('keeps at most its bound, a consumer known already kept up to date', () => {
    const known = new KnownMemos(1);
    known.set(key, sealed(memo(1)), memo(1));
    known.set('cache/other', 'x', memo(1));
    expect(known.size).toBe(1);
    known.set(key, sealed(memo(2)), memo(2));
    expect(known.get(key, sealed(memo(2)))).toEqual(memo(2));
    known.forget(key);
    expect(known.size).toBe(0);
  });
});
