/**
 * Every error holdfast raises on purpose carries a stable `code`. Callers branch on the
 * code, never on the message. Messages name what is wrong and where, and never a secret.
 */
export type ErrorCode =
  /** The configuration file does not parse or validate. */
  | 'CONFIG_INVALID'
  /** A contributions file does not parse or validate; the last good desired state stays. */
  | 'CONTRIBUTIONS_INVALID'
  /**
   * A contributions file passes a bound on its shape or size (nesting, YAML nodes, consumers),
   * refused before more of it is read or parsed; the last good desired state stays.
   */
  | 'CONTRIBUTIONS_BEYOND_BOUNDS'
  /** A grant secret file does not exist (yet). */
  | 'SECRET_MISSING'
  /** A grant secret file exists but this process may not read it (EACCES, EPERM). */
  | 'SECRET_UNREADABLE'
  /** A grant secret file is empty or otherwise unusable. */
  | 'SECRET_INVALID'
  /** A backend call did not finish before its deadline. */
  | 'DEADLINE_EXCEEDED'
  /** A backend could not be reached or refused the admin connection. */
  | 'BACKEND_UNAVAILABLE'
  /** A backend answered with an error. */
  | 'BACKEND_ERROR'
  /**
   * The backend refuses the change until someone acts (a PostgreSQL role that still owns
   * objects cannot be dropped): not retried on a timer, said once.
   */
  | 'BACKEND_REFUSED'
  /** The consumer's record changed under us (compare-and-swap failed), or its lock was lost. */
  | 'REVISION_CONFLICT'
  /** The record store could not be reached, or kept failing after a few retries. */
  | 'STORE_UNAVAILABLE'
  /** A record cannot be read by this holdfast (written by a newer machine version, or damaged). */
  | 'RECORD_UNREADABLE'
  /** No consumer by that name. */
  | 'CONSUMER_UNKNOWN'
  /** A consumer key given (on the command line, in a URL) is not `<provider>/<id>` of names holdfast accepts. */
  | 'CONSUMER_KEY_INVALID'
  /** Another argument of a request (a `since` duration) is not one holdfast accepts. */
  | 'ARGUMENT_INVALID'
  /** No provider by that name in the configuration. */
  | 'PROVIDER_UNKNOWN'
  /** `confirm-removals`: no change is held back for that provider. */
  | 'NOTHING_HELD_BACK'
  /** The dashboard refuses a write that could stop or change holdfast's work (pause, rate limit, a job's data…). */
  | 'DASHBOARD_ACTION_REFUSED'

  /** `confirm-removals`: the change held back now is not the one the person named (`--change`). */
  | 'CHANGE_DIFFERS';

export class HoldfastError extends Error {
  override readonly name = 'HoldfastError';

  /** An invalid file's problems, one a line as its message lists them (`invalidFile`); else empty. */
  readonly problems: readonly string[];

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; problems?: readonly string[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.problems = options?.problems ?? [];
  }
}

/** True when `error` is a {@link HoldfastError}, optionally with one of `codes`. */
export function isHoldfastError(error: unknown, ...codes: ErrorCode[]): error is HoldfastError {
  return error instanceof HoldfastError && (codes.length === 0 || codes.includes(error.code));
}
