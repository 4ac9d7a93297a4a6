/** One part of coordination in every shard, and how an entry finds its own (`../shard-of.ts`). */
import { byShard, shardOf } from '../shard-of.js';

export class Shards<T> {
  constructor(readonly list: readonly T[]) {}

  get count(): number {
    return this.list.length;
  }

  /** The shard of `key`'s consumer. */
  of(key: string): T {
    return this.list[shardOf(key, this.list.length)]!;
  }

  /** Shard 0: what no script touches beside a consumer's keys lives there. */
  get home(): T {
    return this.list[0]!;
  }

  /** `items` by the shard of each one's key, as `[shard, items]`. */
  byShard<I>(items: readonly I[], keyOf: (item: I) => string): Array<[T, I[]]> {
    return [...byShard(items, keyOf, this.list.length)].map(([shard, list]) => [this.list[shard]!, list]);
  }

  /** `read` of every shard, in shard order. */
  all<R>(read: (shard: T) => Promise<R>): Promise<R[]> {
    return Promise.all(this.list.map(read));
  }
}

/** Maps merged, the later winning (the shards' keys do not overlap). */
export function merged<K, V>(maps: ReadonlyArray<Map<K, V>>): Map<K, V> {
  return new Map(maps.flatMap((m) => [...m]));
}
