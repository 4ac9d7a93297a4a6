import type { RedisConnectionConfig } from '../config/config.js';

/** ioredis options for BullMQ from the resolved config (workers need `maxRetriesPerRequest: null`). */
export function bullConnection(c: RedisConnectionConfig) {
  return {
    host: c.host,
    port: c.port,
    db: c.db,
    username: c.username,
    password: c.password,
    ...(c.tls ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}
