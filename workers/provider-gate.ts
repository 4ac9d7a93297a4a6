/**
 * A provider whose check timed out is paused: its other checks are skipped (could not ask,
 * not lost) until one probe gets an answer. The pause lives in the queue's Redis so that every
 * worker sees it; each process keeps it for a quarter of a second so that a routine check
 * costs no extra round trip most of the time, and the checks that find it stale together (a heal's
 * burst: hundreds in one turn) share one read.
 */
import type { Pause, PauseSignals } from '../src/queue/coordination.js';

export type Admission = { admitted: true; probe: boolean } | { admitted: false; pause: Pause };

const CACHE_MS = 250;

export class ProviderGate {
  private readonly cache = new Map<string, { pause: Pause | null; at: number }>();
  /** The read of a provider's pause under way, shared by every check that found the cache stale meanwhile. */
  private readonly reading = new Map<string, Promise<Pause | null>>();

  constructor(private readonly shared: PauseSignals) {}

  private current(provider: string): Promise<Pause | null> | Pause | null {
    const cached = this.cache.get(provider);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.pause;
    return this.reading.get(provider) ?? this.read(provider);
  }

  private read(provider: string): Promise<Pause | null> {
    const reading = this.shared
      .pauseOf(provider)
      .then((pause) => {
        this.cache.set(provider, { pause, at: Date.now() });
        return pause;
      })
      .finally(() => this.reading.delete(provider));
    this.reading.set(provider, reading);
    return reading;
  }

  /** May a check on `provider` ask its backend now? While paused, one probe per `probeMs` may. */
  async admit(provider: string, probeMs: number): Promise<Admission> {
    const pause = await this.current(provider);
    if (!pause) return { admitted: true, probe: false };
    return (await this.shared.takeProbe(provider, probeMs))
      ? { admitted: true, probe: true }
      : { admitted: false, pause };
  }

  /** A check timed out: pause the provider's other checks (the first reason stays). */
  async pause(provider: string, reason: string, now: Date): Promise<boolean> {
    const pause: Pause = { since: now.toISOString(), reason };
    const paused = await this.shared.pauseProvider(provider, pause);
    this.cache.set(provider, {
      pause: paused ? pause : ((await this.shared.pauseOf(provider)) ?? pause),
      at: Date.now(),
    });
    return paused;
  }

  /** The provider answered: lift its pause if there is one. Returns true when it lifted one. */
  async answered(provider: string): Promise<boolean> {
    if ((await this.current(provider)) === null) return false;
    const lifted = await this.shared.unpauseProvider(provider);
    this.cache.set(provider, { pause: null, at: Date.now() });
    return lifted;
  }
}
