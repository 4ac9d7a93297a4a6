/** A consumer's shard: the same for the same key everywhere, and the keys spread evenly. */
import { describe, expect, it } from 'vitest';
import { fnv1a32, shardOf } from '../../../src/queue/shard-of.js';
import { consumerKey } from '../../../src/store/consumer-key.js';

describe('shardOf', () => {
  it('is stable: FNV-1a of the key, the same in every process and version', () => {
    // reference values of 32-bit FNV-1a (offset 0x811c9dc5, prime 0x01000193)
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    const pinned = ['cache/c0000', 'cache/c0001', 'ledger/l0042', 'cache/é'].map((k) => shardOf(k, 3));
    expect(pinned).toEqual(['cache/c0000', 'cache/c0001', 'ledger/l0042', 'cache/é'].map((k) => fnv1a32(k) % 3));
    expect(shardOf('cache/c0000', 3)).toBe(shardOf('cache/c0000', 3));
  });

  it('is 0 for one shard', () => {
    expect(shardOf('cache/anything', 1)).toBe(0);
  });

  it('spreads 30,000 consumer keys within 5% of an even share over 2, 3, 7 and 16 shards', () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => consumerKey(i % 2 ? 'cache' : 'ledger', `app-${i}`));
    for (const shards of [2, 3, 7, 16]) {
      const counts = new Array<number>(shards).fill(0);
      for (const key of keys) counts[shardOf(key, shards)]!++;
      const even = keys.length / shards;
      for (const count of counts) expect(Math.abs(count - even) / even).toBeLessThan(0.05);
    }
  });

  it("spreads the fixtures' short keys (cache/c0000 …) over every one of 3 shards", () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 30; i++) counts[shardOf(`cache/c${String(i).padStart(4, '0')}`, 3)]!++;
    expect(counts.every((c) => c >= 5)).toBe(true);
  });
});
