/**
 * Rotations and their old connections, in the queue's Redis (on a sharded queue, the connection's
 * home: one key per provider):
 *
 * - `<prefix>:rotations:<provider>`, a hash: consumer key → the rotation a worker applied (its login,
 *   when, and when its overlap was cut over). Written by the worker that applies a rotated grant
 *   secret (`workers/effects.ts`), pruned by the old-connections watch once nothing is left to look for.
 * - `<prefix>:old-connections:<provider>`, a hash: consumer key → what the watch's last listing
 *   found of that rotation (the connections from before it, their addresses), expiring unless the
 *   watch lists again: what the status shows and what a check's cutover decides on.
 *
 * Every value is decoded through a schema; one that does not decode reads as absent (no evidence).
 */
import { z } from 'zod';
import type { QueueRedis } from './bull-connection.js';

const rotationCodec = z.object({
  login: z.string(),
  at: z.number(),
  cutAt: z.number().optional(),
});

/** A rotation of a consumer's grant secret, as the worker that applied it noted it. */
export type Rotation = z.infer<typeof rotationCodec>;

/** Addresses kept per consumer: a login with a thousand old connections names the first few. */
export const ADDRESSES_KEPT = 10;

const oldConnectionsCodec = rotationCodec.extend({
  /** When the watch listed them (ms). */
  listedAt: z.number(),
  /** Connections of the login established before the rotation, still open at `listedAt`. */
  count: z.number().int().min(0),
  /** Their addresses (distinct, at most {@link ADDRESSES_KEPT}). */
  addresses: z.array(z.string()).max(ADDRESSES_KEPT),
});

/** A rotation's connections from before it, as the old-connections watch last listed them. */
export type OldConnections = z.infer<typeof oldConnectionsCodec>;

function decoded<T>(codec: z.ZodType<T>, raw: string | null | undefined): T | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const parsed = codec.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function decodedAll<T>(codec: z.ZodType<T>, raw: Record<string, string>): Map<string, T> {
  const all = new Map<string, T>();
  for (const [key, value] of Object.entries(raw)) {
    const one = decoded(codec, value);
    if (one !== undefined) all.set(key, one);
  }
  return all;
}

export class RotationNotes {
  /** `prefix`: holdfast's prefix in the queue's Redis (`holdfastPrefix`). */
  constructor(
    private readonly redis: QueueRedis,
    private readonly prefix: string,
  ) {}

  private rotationsKey(provider: string): string {
    return `${this.prefix}:rotations:${provider}`;
  }

  private oldKey(provider: string): string {
    return `${this.prefix}:old-connections:${provider}`;
  }

  /** A worker applied a rotated grant secret of `key`. */
  async noteRotation(provider: string, key: string, rotation: Rotation): Promise<void> {
    await this.redis.hset(this.rotationsKey(provider), key, JSON.stringify(rotation));
  }

  /** The overlap of `key`'s rotation was cut over at `at` (the rotation is left for the watch to finish). */
  async noteCutover(provider: string, key: string, at: number): Promise<void> {
    const rotation = decoded(rotationCodec, await this.redis.hget(this.rotationsKey(provider), key));
    if (rotation === undefined || rotation.cutAt !== undefined) return;
    await this.redis.hset(this.rotationsKey(provider), key, JSON.stringify({ ...rotation, cutAt: at }));
  }

  /** `provider`'s rotations still looked after. */
  async rotations(provider: string): Promise<Map<string, Rotation>> {
    return decodedAll(rotationCodec, await this.redis.hgetall(this.rotationsKey(provider)));
  }

  /** Rotations with nothing left to look for. */
  async forget(provider: string, keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.redis.hdel(this.rotationsKey(provider), ...keys);
  }

  /** What a listing found, replacing the last one, kept `ttlMs` unless listed again. */
  async setOldConnections(provider: string, found: ReadonlyMap<string, OldConnections>, ttlMs: number): Promise<void> {
    const key = this.oldKey(provider);
    const multi = this.redis.multi().del(key);
    if (found.size > 0) {
      multi.hset(key, Object.fromEntries([...found].map(([k, v]) => [k, JSON.stringify(v)])));
      multi.pexpire(key, ttlMs);
    }
    await multi.exec();
  }

  /** What the last listing found of `key`'s rotation; undefined when nothing is known (no listing lately). */
  async oldConnectionsOf(provider: string, key: string): Promise<OldConnections | undefined> {
    return decoded(oldConnectionsCodec, await this.redis.hget(this.oldKey(provider), key));
  }

  /** What the last listing of each of `providers` found, by consumer key. */
  async oldConnections(providers: readonly string[]): Promise<Map<string, Map<string, OldConnections>>> {
    const all = new Map<string, Map<string, OldConnections>>();
    await Promise.all(
      providers.map(async (provider) => {
        const found = decodedAll(oldConnectionsCodec, await this.redis.hgetall(this.oldKey(provider)));
        if (found.size > 0) all.set(provider, found);
      }),
    );
    return all;
  }
}
