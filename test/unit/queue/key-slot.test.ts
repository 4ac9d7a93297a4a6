/** The slot computation a cluster test uses to place the queue's shards on distinct masters. */
import { describe, expect, it } from 'vitest';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { keySlot, prefixOverMasters } from '../../support/key-slot.js';

describe('keySlot', () => {
  it("is Redis Cluster's: CRC16/XMODEM of the hash tag, mod 16384", () => {
    expect(keySlot('123456789')).toBe(0x31c3); // the CRC16/XMODEM check value
    expect(keySlot('{holdfast}:consumers:wait')).toBe(8121); // as redis-server 7 reports it (issue 15)
    expect(keySlot('{}x')).toBe(10595); // an empty tag: the whole key is hashed
  });

  it('puts {holdfast-0}, -1 and -2 on the three masters of an even three-way split', () => {
    // as `redis-cli --cluster create` splits the slots over three masters
    const evenSplit = (slot: number) => (slot <= 5460 ? 'a' : slot <= 10922 ? 'b' : 'c');
    expect(shardPrefixes('{holdfast}', 3).map(keySlot)).toEqual([13570, 9507, 5440]);
    expect(prefixOverMasters(['{holdfast}'], (p) => shardPrefixes(p, 3), evenSplit)).toBe('{holdfast}');
  });
});
