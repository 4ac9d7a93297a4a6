/**
 * Who keeps the status waiting. Every read through a watched source is counted while it is
 * pending, and the last error each dependency gave is kept, so that a status out of time can
 * name who did not answer, and for how long.
 */

/** What the status reads from: the record store, and the queue's Redis. */
export type Dependency = 'store' | 'queue';

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class DependencyWatch {
  private readonly pending: Record<Dependency, Map<number, number>> = { store: new Map(), queue: new Map() };
  /** The last failed read of each: why, and how long it had waited. */
  private readonly failures: Partial<Record<Dependency, { reason: string; waitedMs: number }>> = {};
  /** What a connection said by itself (a refused connect), kept until a read answers. */
  private readonly connection: Partial<Record<Dependency, string>> = {};
  private next = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** `target` whose every method call is a watched read of `dependency` (its methods must return promises). */
  watched<T extends object>(dependency: Dependency, target: T): T {
    return new Proxy(target, {
      get: (object, property) => {
        const value: unknown = Reflect.get(object, property, object);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          this.track(dependency, () => Promise.resolve(Reflect.apply(value, object, args) as unknown));
      },
    });
  }

  /** Runs one read of `dependency`, counted while pending. */
  async track<T>(dependency: Dependency, read: () => Promise<T>): Promise<T> {
    const id = this.next++;
    const start = this.now();
    this.pending[dependency].set(id, start);
    try {
      const value = await read();
      delete this.failures[dependency];
      delete this.connection[dependency];
      return value;
    } catch (error) {
      this.failures[dependency] = { reason: message(error), waitedMs: this.now() - start };
      throw error;
    } finally {
      this.pending[dependency].delete(id);
    }
  }

  /** An error a connection of `dependency` reported by itself; null once it connects again. */
  noteConnection(dependency: Dependency, error: unknown): void {
    if (error === null) delete this.connection[dependency];
    else this.connection[dependency] = message(error);
  }

  /** Since when `dependency` keeps a read waiting (the oldest still pending), or null when none is. */
  waitingSince(dependency: Dependency): number | null {
    let oldest: number | null = null;
    for (const start of this.pending[dependency].values()) oldest = oldest === null ? start : Math.min(oldest, start);
    return oldest;
  }

  /** Why `dependency` last failed: what its connection said, else its last read's error. */
  lastError(dependency: Dependency): string | undefined {
    return this.connection[dependency] ?? this.failures[dependency]?.reason;
  }

  /** How long the last failed read of `dependency` had waited when it failed, or null. */
  lastWaitMs(dependency: Dependency): number | null {
    return this.failures[dependency]?.waitedMs ?? null;
  }
}
