/**
 * Which of the queue's `queue.shards` shards a consumer belongs to: a stable hash of its key
 * (`<provider>/<id>`, see `store/consumer-key.ts`), FNV-1a over its UTF-8 bytes, 32 bits,
 * modulo the number of shards. The same key gives the same shard in every process, version and
 * run that reads the same `queue.shards`; changing the number moves most consumers to another
 * shard (see `shard-prefixes.ts` and docs/topologies.md's "Changing `queue.shards`").
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/** FNV-1a (32 bits) of `text`'s UTF-8 bytes, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (const byte of encoder.encode(text)) hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  return hash;
}

/** The shard (0 … `shards` − 1) of the consumer `key`; always 0 when there is one shard. */
export function shardOf(key: string, shards: number): number {
  return shards <= 1 ? 0 : fnv1a32(key) % shards;
}

/** `items` grouped by the shard of each one's key: shard → its items, in their order. */
export function byShard<T>(items: readonly T[], keyOf: (item: T) => string, shards: number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const shard = shardOf(keyOf(item), shards);
    const list = groups.get(shard);
    if (list) list.push(item);
    else groups.set(shard, [item]);
  }
  return groups;
}
