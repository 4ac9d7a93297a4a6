/** What each part of coordination works with: one connection, the key table and the script table on it. */
import type { Redis } from 'ioredis';
import type { CoordinationKeys } from './keys.js';
import type { ScriptRunner } from './scripts.js';

export interface CoordinationContext {
  redis: Redis;
  keys: CoordinationKeys;
  scripts: ScriptRunner;
}
