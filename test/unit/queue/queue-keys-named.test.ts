/**
 * The status names the queue's job keys without loading BullMQ: they are the keys BullMQ itself uses, shard by shard.
 */
import { QueueKeys } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { queueKeysNamed } from '../../../src/schedule/queued-checks.js';

describe('the queue keys the status reads', () => {
  it.each([1, 4])('are BullMQ’s own keys in each of %i shard(s)', (shards) => {
    const keys = queueKeysNamed('hf', 'consumers', shards);
    expect(keys.shards).toBe(shards);
    shardPrefixes('hf', shards).forEach((prefix, shard) => {
      const bull = new QueueKeys(prefix);
      for (const type of ['failed', 'cache/photos@3', 'wait'])
        expect(keys.toKey(shard, type)).toBe(bull.toKey('consumers', type));
    });
  });
});
