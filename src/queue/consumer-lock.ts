/**
 * One actor at a time: a worker holds a consumer's lock (in the queue's Redis) for as long as
 * it acts on the consumer. The lock expires by itself when its holder dies; a holder extends
 * it before each effect. Only the holder of the token can extend or release it.
 */
import type { Redis } from 'ioredis';

const EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export class ConsumerLocks {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private lockKey(key: string): string {
    return `${this.prefix}:lock:${key}`;
  }

  /** Takes the lock for `ttlMs` under `token`; false when another worker holds it. */
  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.lockKey(key), token, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Extends a lock this token holds; false when it expired (and someone else may hold it). */
  async extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(EXTEND, 1, this.lockKey(key), token, ttlMs)) === 1;
  }

  async release(key: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.lockKey(key), token);
  }
}
