/**
 * Redis Cluster's slot of a key (`src/queue/key-slot.ts`), so that a test can choose a queue prefix whose shards land
 * on distinct masters:
 * which master serves a slot is the cluster's choice, and N random tags over N masters all
 * differ only now and then.
 */
import { keySlot } from '../../src/queue/key-slot.js';

export { keySlot };

/**
 * The first of `prefixes` whose shard prefixes (`shardsOf(prefix)`) land on as many distinct masters as there are
 * shards.
 */
export function prefixOverMasters(
  prefixes: Iterable<string>,
  shardsOf: (prefix: string) => string[],
  masterOf: (slot: number) => string,
): string | undefined {
  for (const prefix of prefixes) {
    const shards = shardsOf(prefix);
    if (new Set(shards.map((p) => masterOf(keySlot(p)))).size === shards.length) return prefix;
  }
  return undefined;
}
