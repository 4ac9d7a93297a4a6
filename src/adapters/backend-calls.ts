/**
 * What every adapter does around a call to its backend: refuse at once when the deadline has
 * passed, wait for one of a bounded number of call slots, race the call against its
 * AbortSignal, and turn whatever the driver throws into a scrubbed {@link HoldfastError}:
 * `DEADLINE_EXCEEDED`, `BACKEND_UNAVAILABLE` (could not reach or authenticate),
 * `BACKEND_ERROR` (the backend answered with an error), or a code the adapter chose.
 */
import { HoldfastError, isHoldfastError, type ErrorCode } from '../errors/holdfast-error.js';
import { Scrubber } from '../logging/scrubber.js';
import { onAbort } from './abort-listeners.js';

/** How an adapter reads its driver's errors. */
export interface ErrorReading {
  /**
   * Whether the backend answered (`BACKEND_ERROR`) rather than could not be reached or refused the admin
   * (`BACKEND_UNAVAILABLE`).
   */
  answered(error: unknown): boolean;
  /** A more precise code for an answered error, if the adapter has one (e.g. `BACKEND_REFUSED`). */
  code?(error: unknown): ErrorCode | undefined;
  /** The words of an error, where the driver keeps more than its message (a server's DETAIL); scrubbed after. */
  describe?(error: unknown): string;
}

export interface BackendCallsOptions extends ErrorReading {
  /** The adapter's kind, e.g. `postgres-roles`: every message starts with it. */
  adapter: string;
  /** Where the backend is, e.g. `127.0.0.1:5432`. */
  where: string;
  /** Secrets known for the adapter's life (its admin password). */
  adminSecrets?: readonly string[];
  /** Calls running at once at most; more wait their turn (default unbounded). */
  maxConcurrent?: number;
}

/** The host of a URL, for messages; `fallback` when it does not parse. */
export function hostOf(url: string, fallback: string): string {
  try {
    return new URL(url).host || fallback;
  } catch {
    return fallback;
  }
}

/** At most `max` holders at once; a waiter whose signal aborts leaves the line. */
class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  async take(signal: AbortSignal): Promise<() => void> {
    if (this.running >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          stop();
          resolve();
        };
        const stop = onAbort(signal, () => {
          const at = this.waiting.indexOf(wake);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(new Error('aborted while waiting for a call slot'));
        });
        this.waiting.push(wake);
      });
    }
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }
}

export class BackendCalls {
  /** Knows the admin secrets; each call extends it with the secrets in play. */
  readonly scrubber: Scrubber;
  private readonly slots: Slots | undefined;

  constructor(private readonly options: BackendCallsOptions) {
    this.scrubber = new Scrubber(options.adminSecrets?.filter((s) => s !== '') ?? []);
    this.slots = options.maxConcurrent === undefined ? undefined : new Slots(options.maxConcurrent);
  }

  /**
   * Runs `start` in a call slot, raced against `signal`. `start` is not begun when the signal
   * aborts first (while waiting for a slot, say), so an abandoned create never runs late. The
   * caller is answered at its deadline; the slot stays taken until `start`'s call has ended.
   * `secrets` are scrubbed from any error, with `forms` (derived strings such as verifiers).
   */
  async run<T>(
    signal: AbortSignal,
    what: string,
    secrets: readonly string[],
    start: () => Promise<T>,
    forms: readonly string[] = [],
  ): Promise<T> {
    if (signal.aborted) throw this.deadline(what);
    let release: (() => void) | undefined;
    try {
      release = await this.slots?.take(signal); // rejects only when the signal aborts
    } catch {
      throw this.deadline(what);
    }
    if (signal.aborted) {
      release?.();
      throw this.deadline(what);
    }
    const work = Promise.resolve().then(start);
    // the slot is held until the backend's call has ended, not only until its caller's deadline: a call given up on may
    // still run on the server (until the deadline the server keeps), and the slots bound what runs there at once
    if (release) work.then(release, release);
    return this.race(work, signal, what, secrets, forms);
  }

  /** Settles with `work`, or rejects with DEADLINE_EXCEEDED as soon as `signal` aborts. */
  race<T>(
    work: Promise<T>,
    signal: AbortSignal,
    what: string,
    secrets: readonly string[] = [],
    forms: readonly string[] = [],
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // one listener per signal, however many calls share it (`abort-listeners.ts`)
      const stop = onAbort(signal, () => reject(this.deadline(what)));
      work.then(
        (value) => {
          stop();
          resolve(value);
        },
        (error: unknown) => {
          stop();
          reject(this.failure(error, what, secrets, forms));
        },
      );
    });
  }

  deadline(what: string): HoldfastError {
    return new HoldfastError('DEADLINE_EXCEEDED', `${this.prefix()}: ${what} did not finish before its deadline`);
  }

  unavailable(what: string, why: string): HoldfastError {
    return new HoldfastError(
      'BACKEND_UNAVAILABLE',
      `${this.prefix()}: could not run ${what}: ${this.scrubber.scrub(why)}`,
    );
  }

  /**
   * The driver's or the server's error, scrubbed of every secret, as a HoldfastError (no cause: it may hold a secret).
   */
  failure(error: unknown, what: string, secrets: readonly string[] = [], forms: readonly string[] = []): HoldfastError {
    if (isHoldfastError(error)) return error;
    const raw = this.options.describe?.(error) ?? (error instanceof Error ? error.message : String(error));
    const message = this.scrubber
      .with(...secrets)
      .withForms(forms)
      .scrub(raw);
    if (!this.options.answered(error)) return this.unavailable(what, message);
    const code = this.options.code?.(error) ?? 'BACKEND_ERROR';
    return new HoldfastError(code, `${this.prefix()}: ${what} failed: ${message}`);
  }

  private prefix(): string {
    return `${this.options.adapter} at ${this.options.where}`;
  }
}
