/**
 * Which of a Redis Cluster's 16384 slots a key is in, by Redis's own rule (CRC16 of its hash tag,
 * the text between the first `{` and the first `}` after it when not empty, else of the whole
 * key): `cluster-key-slot`, the function ioredis's own cluster client routes by. The status uses
 * it to name the node that owns a shard.
 */
import { createRequire } from 'node:module';

const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/** The cluster slot of `key` (0 … 16383). */
export function keySlot(key: string): number {
  return calculateSlot(key);
}
