/** The two ways coordination reads many values at once, each decoded; what does not decode is left out. */
import type { QueueRedis } from '../bull-connection.js';

/** Fields read per `HMGET`: a status of 100k consumers never sends one command of them all. */
const FIELDS_PER_READ = 1000;

/** The fields `fields` of the hash `hash`, decoded, by field; absent or undecodable fields are left out. */
export async function hashFields<T>(
  redis: QueueRedis,
  hash: string,
  fields: readonly string[],
  decode: (raw: string, field: string) => T | null,
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  for (let i = 0; i < fields.length; i += FIELDS_PER_READ) {
    const chunk = fields.slice(i, i + FIELDS_PER_READ);
    const values = await redis.hmget(hash, ...chunk);
    chunk.forEach((field, j) => {
      const raw = values[j];
      const value = raw ? decode(raw, field) : null;
      if (value !== null) out.set(field, value);
    });
  }
  return out;
}

/** Each provider's value at `keyOf(provider)`, decoded, by provider; absent or undecodable values are left out. */
export async function perProvider<T>(
  redis: QueueRedis,
  providers: readonly string[],
  keyOf: (provider: string) => string,
  decode: (raw: string) => T | null,
): Promise<Map<string, T>> {
  const out = new Map<string, T>();
  if (providers.length === 0) return out;
  const values = await redis.mget(...providers.map(keyOf));
  providers.forEach((provider, i) => {
    const raw = values[i];
    const value = raw ? decode(raw) : null;
    if (value !== null) out.set(provider, value);
  });
  return out;
}
