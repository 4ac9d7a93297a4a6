/**
 * Reads each node's incarnation at a pace, for an adapter whose backend has no health ping of its
 * own: at the first call of {@link IncarnationSource}'s methods, then every `everyMs`, one read in
 * flight per node, each given `timeoutMs` (and the adapter's `read` has the server keep it too
 * where it can). A read that fails marks the node as not answering, by its error's code only: no
 * server's words, so no secret, are kept; while it does not answer it is read again every
 * `failingEveryMs` (a fifth of `everyMs`), so that a server back (restarted, re-initialised) is
 * seen at once, not up to a tick later. Timers do not hold the process open.
 */
import { HoldfastError, isHoldfastError } from '../errors/holdfast-error.js';
import type { AdminConnection } from './adapter.js';
import type { Incarnation, IncarnationChange, IncarnationSource, NodeRun } from './incarnation.js';
import { IncarnationTracker } from './incarnation-tracker.js';

export interface IncarnationPace {
  /** How often each node is read (default 1 s). */
  everyMs: number;
  /** How long one read may take; longer is not answering (default 5 s). */
  timeoutMs: number;
  /** How soon a node whose read failed is read again (default a fifth of `everyMs`). */
  failingEveryMs?: number;
}

/** The pace of a provider's reads: every second, each within a third of its `checkTimeout` (at most 5 s). */
export function incarnationPace(admin: Pick<AdminConnection, 'pace'>): IncarnationPace {
  const checkTimeoutMs = admin.pace?.checkTimeoutMs ?? 30_000;
  return { everyMs: 1_000, timeoutMs: Math.min(5_000, Math.max(200, Math.floor(checkTimeoutMs / 3))) };
}

/** Why a read failed, as a code: the HoldfastError's, a driver error's name, or `no-answer`. */
export function failureCode(error: unknown): string {
  if (isHoldfastError(error)) return error.code;
  return error instanceof Error && /^[A-Za-z]+$/.test(error.name) ? error.name : 'no-answer';
}

export interface IncarnationWatchOptions extends IncarnationPace {
  /** The nodes to read (`host:port`). */
  nodes: () => readonly string[];
  /** Reads `node`'s run; throws when it does not answer. Gives up when `signal` aborts. */
  read: (node: string, signal: AbortSignal) => Promise<NodeRun>;
}

/** `work`, or a rejection as soon as `signal` aborts: a read that ignores its signal still ends for the watch. */
function raced<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new HoldfastError('DEADLINE_EXCEEDED', 'the read of an incarnation passed its deadline'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class IncarnationWatch implements IncarnationSource {
  readonly tracker = new IncarnationTracker();
  private timer: NodeJS.Timeout | undefined;
  private readonly reading = new Set<string>();
  private closed = false;

  constructor(private readonly options: IncarnationWatchOptions) {}

  incarnations(): ReadonlyMap<string, Incarnation> {
    this.start();
    return this.tracker.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    this.start();
    return this.tracker.onIncarnation(listener);
  }

  /** Whether reading has started (a watch nobody asked sends nothing). */
  get started(): boolean {
    return this.timer !== undefined;
  }

  /** Reads every node now (a connection was made again, say); nothing when not started. */
  readNow(): void {
    if (!this.started || this.closed) return;
    for (const node of this.options.nodes()) void this.readOne(node);
  }

  /** `node` was seen not answering beside the reads (a driver's heartbeat failed). */
  failed(node: string, why: string): void {
    this.tracker.failed(node, why);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  private start(): void {
    if (this.started || this.closed) return;
    this.timer = setInterval(() => this.readNow(), this.options.everyMs).unref();
    this.readNow();
  }

  private async readOne(node: string): Promise<void> {
    if (this.reading.has(node)) return;
    this.reading.add(node);
    try {
      const signal = AbortSignal.timeout(this.options.timeoutMs);
      const run = await raced(this.options.read(node, signal), signal);
      if (!this.closed) this.tracker.answered(node, run);
    } catch (error) {
      this.tracker.failed(node, failureCode(error));
      this.readSoon(node);
    } finally {
      this.reading.delete(node);
    }
  }

  /** `node` did not answer: read again soon (once per failure), not at the next tick only. */
  private readSoon(node: string): void {
    if (this.closed) return;
    const ms = this.options.failingEveryMs ?? Math.max(1, Math.floor(this.options.everyMs / 5));
    setTimeout(() => {
      if (!this.closed) void this.readOne(node);
    }, ms).unref();
  }
}
