/** A sharded coordination's answers that are sums or merges over its shards. */
import { describe, expect, it } from 'vitest';
import type { Coordination } from '../../../src/queue/coordination.js';
import { ShardedCoordination } from '../../../src/queue/sharded-coordination.js';
import { shardOf } from '../../../src/queue/shard-of.js';

/** A shard that only answers `release` (with how many consumers of the provider it has asked) and `allStates`. */
function shard(asked: number, states: Record<string, string>, unsealed: string[] = []): Coordination {
  return {
    locks: { release: () => Promise.resolve(asked) },
    notes: { allStates: () => Promise.resolve({ states, unsealed }) },
  } as unknown as Coordination;
}

const keyIn = (wanted: number) =>
  Array.from({ length: 100 }, (_, i) => `cache/c${i}`).find((k) => shardOf(k, 3) === wanted)!;

describe('ShardedCoordination', () => {
  it("tells a release how many of the provider's consumers every shard has asked about, estimating the shards not heard from yet", async () => {
    const sharded = new ShardedCoordination([shard(10, {}), shard(12, {}), shard(8, {})]);
    expect(await sharded.locks.release(keyIn(0), 'cache', 't')).toBe(30); // 10, and as many for each of the two not heard from
    expect(await sharded.locks.release(keyIn(1), 'cache', 't')).toBe(33); // 10 + 12, and their mean for the third
    expect(await sharded.locks.release(keyIn(2), 'cache', 't')).toBe(30); // 10 + 12 + 8
  });

  it("merges every shard's states", async () => {
    const sharded = new ShardedCoordination([
      shard(0, { 'cache/a': 'held 1' }),
      shard(0, { 'cache/b': 'lost 2' }),
      shard(0, {}, ['cache/c']),
    ]);
    expect(await sharded.notes.allStates()).toEqual({
      states: { 'cache/a': 'held 1', 'cache/b': 'lost 2' },
      unsealed: ['cache/c'],
    });
  });
});
