/**
 * A provider whose check timed out is paused: its other checks are skipped (could not ask,
 * not lost) until one probe gets an answer. The pause lives in the queue's Redis so every
 * worker sees it; each process caches it briefly so a routine check costs no extra round trip
 * most of the time.
 */
import type { Redis } from 'ioredis';

export interface Pause {
  since: string;
  reason: string;
}

export type Admission = { admitted: true; probe: boolean } | { admitted: false; pause: Pause };

const CACHE_MS = 250;

export class ProviderGate {
  private readonly cache = new Map<string, { pause: Pause | null; at: number }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private pausedKey(provider: string): string {
    return `${this.prefix}:paused:${provider}`;
  }

  private async current(provider: string): Promise<Pause | null> {
    const cached = this.cache.get(provider);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.pause;
    const raw = await this.redis.get(this.pausedKey(provider));
    const pause = raw ? (JSON.parse(raw) as Pause) : null;
    this.cache.set(provider, { pause, at: Date.now() });
    return pause;
  }

  /** May a check on `provider` ask its backend now? While paused, one probe per `probeMs` may. */
  async admit(provider: string, probeMs: number): Promise<Admission> {
    const pause = await this.current(provider);
    if (!pause) return { admitted: true, probe: false };
    const probe = await this.redis.set(`${this.prefix}:probe:${provider}`, '1', 'PX', probeMs, 'NX');
    return probe === 'OK' ? { admitted: true, probe: true } : { admitted: false, pause };
  }

  /** A check timed out: pause the provider's other checks (the first reason stays). */
  async pause(provider: string, reason: string, now: Date): Promise<boolean> {
    const pause: Pause = { since: now.toISOString(), reason };
    const set = await this.redis.set(this.pausedKey(provider), JSON.stringify(pause), 'NX');
    this.cache.set(provider, { pause: set === 'OK' ? pause : ((await this.current(provider)) ?? pause), at: Date.now() });
    return set === 'OK';
  }

  /** The provider answered: lift its pause if there is one. Returns true when it lifted one. */
  async answered(provider: string): Promise<boolean> {
    if ((await this.current(provider)) === null) return false;
    const deleted = await this.redis.del(this.pausedKey(provider));
    this.cache.set(provider, { pause: null, at: Date.now() });
    return deleted > 0;
  }

  /** Every paused provider, for the status. */
  async paused(providers: string[]): Promise<Map<string, Pause>> {
    const out = new Map<string, Pause>();
    if (providers.length === 0) return out;
    const values = await this.redis.mget(providers.map((p) => this.pausedKey(p)));
    providers.forEach((p, i) => {
      const raw = values[i];
      if (raw) out.set(p, JSON.parse(raw) as Pause);
    });
    return out;
  }
}
