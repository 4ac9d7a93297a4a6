/**
 * Contested consumers, as the status, the consumer's page and `/metrics` read them: each
 * provider's consumers whose contest has not ended (`../contest.ts`), counted, and the first
 * few of them with why. What counts them is `contest-script.ts`, sent with a quiet heal's note.
 */
import { z } from 'zod';
import { providerOf } from '../../store/consumer-key.js';
import type { ContestedConsumer } from '../contest.js';
import { CoordinationPart } from './context.js';
import { hashFields } from './reads.js';
import { decodeJson } from './values.js';

/** Why a consumer is contested, as the script keeps it. */
const whyCodec = z.object({ since: z.number(), n: z.number(), last: z.string(), at: z.number(), w: z.number() });

/** A provider's contested consumers now: how many, and the first `limit` of them (those whose contest ends first). */
export interface ProviderContests {
  count: number;
  listed: ContestedConsumer[];
}

export interface ContestReads {
  /** Each of `providers`' contested consumers at `nowMs`: counted, and up to `limit` listed. */
  contested(providers: readonly string[], nowMs: number, limit: number): Promise<Map<string, ProviderContests>>;
  /** The consumer `key`'s contest at `nowMs`, or null when it is not contested. */
  contestOf(key: string, nowMs: number): Promise<ContestedConsumer | null>;
}

function consumerOf(key: string, until: number, raw: string): ContestedConsumer | null {
  const why = decodeJson(whyCodec, raw);
  return why && { key, findings: why.n, since: why.since, until, last: why.last, windowMs: why.w };
}

/** Contests on one connection, under one key table. */
export class Contests extends CoordinationPart implements ContestReads {
  async contested(providers: readonly string[], nowMs: number, limit: number): Promise<Map<string, ProviderContests>> {
    const each = await Promise.all(providers.map((p) => this.ofProvider(p, nowMs, limit)));
    return new Map(providers.map((p, i) => [p, each[i]!]));
  }

  async contestOf(key: string, nowMs: number): Promise<ContestedConsumer | null> {
    const provider = providerOf(key);
    const [until, raw] = await Promise.all([
      this.redis.zscore(this.keys.contested(provider), key),
      this.redis.hget(this.keys.contestedWhy(provider), key),
    ]);
    if (until === null || raw === null || Number(until) <= nowMs) return null;
    return consumerOf(key, Number(until), raw);
  }

  private async ofProvider(provider: string, nowMs: number, limit: number): Promise<ProviderContests> {
    const set = this.keys.contested(provider);
    const [count, flat] = await Promise.all([
      this.redis.zcount(set, `(${nowMs}`, '+inf'),
      this.redis.zrangebyscore(set, `(${nowMs}`, '+inf', 'WITHSCORES', 'LIMIT', 0, limit),
    ]);
    const until = new Map<string, number>();
    for (let i = 0; i + 1 < flat.length; i += 2) until.set(flat[i]!, Number(flat[i + 1]));
    const whys = await hashFields(this.redis, this.keys.contestedWhy(provider), [...until.keys()], (raw) => raw);
    const listed = [...until].flatMap(([key, at]) => consumerOf(key, at, whys.get(key) ?? '') ?? []);
    return { count, listed };
  }
}
