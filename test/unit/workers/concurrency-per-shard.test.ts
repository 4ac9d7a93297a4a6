/** A worker process's concurrency, split over the queue's shards. */
import { describe, expect, it } from 'vitest';
import { concurrencyPerShard } from '../../../workers/consumer-worker.js';

describe('concurrencyPerShard', () => {
  it('splits as evenly as it goes, keeping the total', () => {
    expect(concurrencyPerShard(32, 1)).toEqual([32]);
    expect(concurrencyPerShard(32, 3)).toEqual([11, 11, 10]);
    expect(concurrencyPerShard(16, 4)).toEqual([4, 4, 4, 4]);
  });

  it('gives every shard at least one', () => {
    expect(concurrencyPerShard(2, 3)).toEqual([1, 1, 1]);
  });
});
