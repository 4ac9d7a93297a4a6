/** A sharded coordination's answers that are sums or merges over its shards. */
import { describe, expect, it } from 'vitest';
import type { Coordination } from '../../../src/queue/coordination.js';
import { ShardedCoordination } from '../../../src/queue/sharded-coordination.js';
import { shardOf } from '../../../src/queue/shard-of.js';

/** A shard that only answers `release` (with how many consumers of the provider it has asked) and `allStates`. */
function shard(asked: number, states: Record<string, string>, unsealed: string[] = []): Coordination {
  return {
    locks: { release: () => Promise.resolve({ askedAbout: asked, suspect: false }) },
    notes: { allStates: () => Promise.resolve({ states, unsealed }) },
  } as unknown as Coordination;
}

/** A release's reply: `askedAbout` consumers of the provider asked about, not suspect. */
const replied = (askedAbout: number) => ({ askedAbout, suspect: false });

const keyIn = (wanted: number) =>
  Array.from({ length: 100 }, (_, i) => `cache/c${i}`).find((k) => shardOf(k, 3) === wanted)!;

describe('ShardedCoordination', () => {
  it("tells a release how many of the provider's consumers every shard has asked about, estimating the shards not heard from yet", async () => {
    const sharded = new ShardedCoordination([shard(10, {}), shard(12, {}), shard(8, {})]);
    expect(await sharded.locks.release(keyIn(0), 'cache', 't')).toEqual(replied(30)); // 10, and as many for each of the two not heard from
    expect(await sharded.locks.release(keyIn(1), 'cache', 't')).toEqual(replied(33)); // 10 + 12, and their mean for the third
    expect(await sharded.locks.release(keyIn(2), 'cache', 't')).toEqual(replied(30)); // 10 + 12 + 8
  });

  it("claims and releases many consumers of several shards in one call per shard, each told its own shard's reply", async () => {
    /** A shard whose claims tell each consumer's key back as its revision's place, and whose releases count its calls. */
    const calls: number[] = [];
    const shardOf3 = (n: number, asked: number): Coordination =>
      ({
        locks: {
          claimMany: (claims: ReadonlyArray<{ key: string }>) => {
            calls.push(n);
            return Promise.resolve(
              claims.map(({ key }) =>
                key.endsWith('busy') ? null : { rev: n, memo: null, removedAt: Number(key.slice(7)) },
              ),
            );
          },
          releaseMany: (releases: readonly unknown[]) => {
            calls.push(n);
            return Promise.resolve(releases.map(() => ({ askedAbout: asked, suspect: false })));
          },
        },
      }) as unknown as Coordination;
    const sharded = new ShardedCoordination([shardOf3(0, 10), shardOf3(1, 12), shardOf3(2, 8)]);
    const keys = Array.from({ length: 12 }, (_, i) => `cache/c${i}`);
    const claims = await sharded.locks.claimMany(keys.map((key) => ({ key, token: 't', ttlMs: 1000 })));
    expect(claims).toEqual(keys.map((key, i) => ({ rev: shardOf(key, 3), memo: null, removedAt: i })));
    expect(calls.sort()).toEqual([0, 1, 2]);
    calls.length = 0;
    const told = await sharded.locks.releaseMany(keys.map((key) => ({ key, provider: 'cache', token: 't' })));
    expect(calls.sort()).toEqual([0, 1, 2]);
    // every shard heard from in the one call: the provider's count is their sum
    expect(told.at(-1)).toEqual({ askedAbout: 30, suspect: false });
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
