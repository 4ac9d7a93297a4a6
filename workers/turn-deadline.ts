/**
 * An effect's deadline, shared by the calls of one turn of the event loop: a heal's burst begins
 * hundreds of checks, applies and confirmations in one turn, each bounded by its provider's
 * `checkTimeout`, and one `AbortController` and one timer per call were a measurable share of a
 * heal's CPU. Calls with the same timeout begun in the same turn share one signal, which aborts at
 * the first call's deadline: no call is given more than its timeout, and none less than its timeout
 * minus the length of the turn it began in. The timer is cleared once the turn ended and every call
 * that shared it is done (`AbortSignal.timeout` keeps one running to the end).
 */
import { setMaxListeners } from 'node:events';

/** One call's deadline: its signal, when it aborts (ms since the epoch), and what to call when the call is done. */
export interface CallDeadline {
  signal: AbortSignal;
  deadline: number;
  done: () => void;
}

/** The signal the calls of one turn share. */
class Shared {
  readonly controller = new AbortController();
  readonly timer: NodeJS.Timeout;
  /** Calls that took this deadline and are not done yet. */
  users = 0;
  /** The turn ended: no call joins it any more. */
  closed = false;

  constructor(
    ms: number,
    readonly deadline: number,
  ) {
    // every call of the turn listens to the one signal (the batch, the adapter's own deadline)
    setMaxListeners(0, this.controller.signal);
    this.timer = setTimeout(() => this.controller.abort(), ms);
  }

  take(): CallDeadline {
    this.users += 1;
    let done = false;
    return {
      signal: this.controller.signal,
      deadline: this.deadline,
      done: () => {
        if (done) return;
        done = true;
        this.users -= 1;
        this.release();
      },
    };
  }

  close(): void {
    this.closed = true;
    this.release();
  }

  private release(): void {
    if (this.closed && this.users === 0) clearTimeout(this.timer);
  }
}

/** The deadlines of one process's calls, one shared signal per timeout per turn. */
export class TurnDeadlines {
  private readonly open = new Map<number, Shared>();

  /** A deadline `ms` from now, shared with the other calls of this turn given the same `ms`. */
  take(ms: number): CallDeadline {
    let shared = this.open.get(ms);
    if (shared === undefined) {
      shared = new Shared(ms, Date.now() + ms);
      this.open.set(ms, shared);
      const opened = shared;
      setImmediate(() => {
        if (this.open.get(ms) === opened) this.open.delete(ms);
        opened.close();
      });
    }
    return shared.take();
  }
}
