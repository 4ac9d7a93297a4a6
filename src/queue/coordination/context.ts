/** What each part of coordination works with: one connection, the key table and the script table on it. */
import type { QueueRedis } from '../bull-connection.js';
import type { CoordinationKeys } from './keys.js';
import type { ScriptRunner } from './scripts.js';

export interface CoordinationContext {
  redis: QueueRedis;
  keys: CoordinationKeys;
  scripts: ScriptRunner;
}

/** A part of coordination (locks, signals, notes): the context, at hand. */
export abstract class CoordinationPart {
  protected readonly redis: QueueRedis;
  protected readonly keys: CoordinationKeys;
  protected readonly scripts: ScriptRunner;

  constructor({ redis, keys, scripts }: CoordinationContext) {
    this.redis = redis;
    this.keys = keys;
    this.scripts = scripts;
  }
}
