/** Each shard's prefix, derived from the configured one, and the prefixes that cannot be split. */
import { describe, expect, it } from 'vitest';
import { shardPrefixes, shardPrefixProblem } from '../../../src/config/shard-prefixes.js';

describe('shard prefixes', () => {
  it('keeps the prefix as configured for one shard (the keys stored before shards existed)', () => {
    expect(shardPrefixes('{holdfast}', 1)).toEqual(['{holdfast}']);
    expect(shardPrefixes('holdfast', 1)).toEqual(['holdfast']);
    expect(shardPrefixes('a{}b', 1)).toEqual(['a{}b']);
  });

  it('adds the shard inside the hash tag', () => {
    expect(shardPrefixes('{holdfast}', 3)).toEqual(['{holdfast-0}', '{holdfast-1}', '{holdfast-2}']);
    expect(shardPrefixes('app:{hf}:x', 2)).toEqual(['app:{hf-0}:x', 'app:{hf-1}:x']);
    // Redis reads the first {…}: the shard goes into that one
    expect(shardPrefixes('{a}{b}', 2)).toEqual(['{a-0}{b}', '{a-1}{b}']);
  });

  it('makes an unbraced prefix the hash tag', () => {
    expect(shardPrefixes('holdfast', 2)).toEqual(['{holdfast-0}', '{holdfast-1}']);
  });

  it('refuses more than one shard for a prefix with a brace but no hash tag', () => {
    for (const prefix of ['a{}b', 'hold}fast', '{holdfast', 'x}{y']) {
      expect(shardPrefixProblem(prefix, 2)).toMatch(/no hash tag can be derived/);
      expect(() => shardPrefixes(prefix, 2)).toThrow(/no hash tag can be derived/);
    }
    expect(shardPrefixProblem('a{}b', 1)).toBeUndefined();
    expect(shardPrefixProblem('{holdfast}', 8)).toBeUndefined();
  });
});
