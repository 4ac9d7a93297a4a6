/**
 * The line of light checks (`AUTH`s) waiting for a node's probe connection. Redis 7.0 closes an unauthenticated
 * connection whose unread replies outgrow about 1 KB (16 pipelined `WRONGPASS` replies), so while no `AUTH` has
 * succeeded on it since it connected, at most {@link ProbeLine.max} are in flight. Once one succeeded the bound is
 * gone, for the checks already waiting too: after a cache restarted empty every light check of the heal's burst is
 * refused and queued at once, and the first confirmation that authenticates lets the rest go together instead of
 * eight a round trip.
 */
import { onAbort } from '../abort-listeners.js';

export class ProbeLine {
  private running = 0;
  private readonly waiting = new Set<() => void>();

  /**
   * `max`: in flight at most while `open` says no; `open`: whether the connection is authenticated now (the bound is
   * lifted).
   */
  constructor(
    readonly max: number,
    private readonly open: () => boolean,
  ) {}

  /** How many calls are waiting for their turn. */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Runs `work` once its turn comes: at once while the connection is open or fewer than {@link max} run. Rejects with
   * `aborted()` (nothing started) when `signal` aborts first.
   */
  async run<T>(signal: AbortSignal, aborted: () => Error, work: () => Promise<T>): Promise<T> {
    while (!this.open() && this.running >= this.max) await this.turn(signal, aborted);
    this.running += 1;
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.next();
    }
  }

  /** Resolves when a call ends (the caller then looks again), rejects when `signal` aborts first. */
  private turn(signal: AbortSignal, aborted: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        stop();
        resolve();
      };
      const stop = onAbort(signal, () => {
        this.waiting.delete(wake);
        reject(aborted());
      });
      if (!signal.aborted) this.waiting.add(wake);
    });
  }

  /** A call ended: every waiter is woken once the connection is open, else the first. */
  private next(): void {
    if (this.open()) {
      const all = [...this.waiting];
      this.waiting.clear();
      for (const wake of all) wake();
      return;
    }
    const first = this.waiting.values().next();
    if (first.done) return;
    this.waiting.delete(first.value);
    first.value();
  }
}
