/** Adapters for engine tests: a recorder around a real adapter, and one that never agrees. */
import type { Adapter, CallOptions, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';

export interface Call {
  method: 'create' | 'holds' | 'remove';
  login: string;
  start: number;
  end?: number;
  outcome?: string;
}

/**
 * Wraps an adapter, records every call, and detects two calls on the same login in flight
 * at once (which the engine must never do, however many workers run).
 */
export class RecordingAdapter implements Adapter {
  readonly calls: Call[] = [];

  /** Recorders sharing `shared` detect overlaps between them (two workers, one detector). */
  constructor(
    private readonly inner: Adapter,
    private readonly shared: { inFlight: Map<string, Call>; overlaps: string[] } = {
      inFlight: new Map(),
      overlaps: [],
    },
  ) {}

  get overlaps(): string[] {
    return this.shared.overlaps;
  }

  private get inFlight(): Map<string, Call> {
    return this.shared.inFlight;
  }

  private async record<T>(method: Call['method'], login: string, run: () => Promise<T>): Promise<T> {
    const call: Call = { method, login, start: Date.now() };
    const other = this.inFlight.get(login);
    if (other)
      this.shared.overlaps.push(
        `${method} on ${login} began while ${other.method} (since ${call.start - other.start} ms) was in flight`,
      );
    this.inFlight.set(login, call);
    this.calls.push(call);
    try {
      const result = await run();
      call.outcome =
        typeof result === 'object' && result !== null && 'held' in result ? (result.held ? 'held' : 'not-held') : 'ok';
      return result;
    } catch (error) {
      call.outcome = `threw: ${(error as Error).message}`;
      throw error;
    } finally {
      call.end = Date.now();
      if (this.inFlight.get(login) === call) this.inFlight.delete(login);
    }
  }

  count(method: Call['method'], since = 0): number {
    return this.calls.filter((c) => c.method === method && c.start >= since).length;
  }

  create(grant: Grant, options: CallOptions): Promise<void> {
    return this.record('create', grant.login, () => this.inner.create(grant, options));
  }

  remove(login: string, options: CallOptions, values?: unknown): Promise<void> {
    return this.record('remove', login, () => this.inner.remove(login, options, values));
  }

  holds(grant: Grant, options: CallOptions): Promise<HoldsAnswer> {
    const inner = this.inner;
    if (!inner.holds) throw new Error('inner adapter cannot be asked');
    return this.record('holds', grant.login, () => inner.holds!(grant, options));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Creates succeed (or fail on demand) but the backend never agrees it holds the consumer. */
export class DisagreeingAdapter implements Adapter {
  failNextCreates = 0;

  create(): Promise<void> {
    if (this.failNextCreates > 0) {
      this.failNextCreates--;
      return Promise.reject(new Error('ERR injected create failure'));
    }
    return Promise.resolve();
  }

  remove(): Promise<void> {
    return Promise.resolve();
  }

  holds(): Promise<HoldsAnswer> {
    return Promise.resolve({
      held: false,
      reason: 'rules-differ',
      detail: 'commands: backend has "-@all", expected "+@read"',
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Fails each login's first create with an error that echoes the password, as a careless driver might. */
export class LeakyAdapter implements Adapter {
  private readonly failed = new Set<string>();

  constructor(private readonly inner: Adapter) {}

  create(grant: Grant, options: CallOptions): Promise<void> {
    if (!this.failed.has(grant.login)) {
      this.failed.add(grant.login);
      return Promise.reject(
        new Error(`ERR Error in ACL SETUSER modifier '>${grant.password}': Syntax error`, {
          cause: new Error(`password was ${grant.password}`),
        }),
      );
    }
    return this.inner.create(grant, options);
  }

  remove(login: string, options: CallOptions, values?: unknown): Promise<void> {
    return this.inner.remove(login, options, values);
  }

  holds(grant: Grant, options: CallOptions): Promise<HoldsAnswer> {
    const inner = this.inner;
    if (!inner.holds) throw new Error('inner adapter cannot be asked');
    return inner.holds(grant, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
