import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../../src/adapters/bounded-cache.js';
import { Remembered } from '../../../src/adapters/remembered.js';

describe('a bounded cache', () => {
  it('keeps at most its bound, the least recently used out first', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recently used
    cache.set('c', 3);
    expect(cache.size).toBe(2);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('as a remembered set: a key asked about stays, the oldest goes', () => {
    const seen = new Remembered(2);
    seen.add('a');
    seen.add('b');
    expect(seen.has('a')).toBe(true);
    seen.add('c');
    expect([seen.has('a'), seen.has('b'), seen.has('c')]).toEqual([true, false, true]);
  });
});
