import { BoundedCache } from './bounded-cache.js';

/**
 * A bounded set, least recently used out first: what an adapter remembers without growing with the number of consumers.
 */
export class Remembered {
  private readonly keys: BoundedCache<string, true>;

  constructor(max: number) {
    this.keys = new BoundedCache(max);
  }

  has(key: string): boolean {
    return this.keys.get(key) === true;
  }

  add(key: string): void {
    this.keys.set(key, true);
  }
}
