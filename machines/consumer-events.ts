/**
 * The events a consumer machine understands. Each job delivers one of the first group to
 * one consumer; the worker feeds effect results (second group) back; the end of a wait (an
 * XState delayed event) comes back as a scheduled wait, run as a wait job. No event ever carries a secret.
 */

/** From the desired-state sync, the CLI or the API. */
export type CommandEvent =
  /** The consumer is wanted with this spec (login, values, secret path). */
  | { type: 'DESIRED'; specHash: string }
  /** The consumer is declared but its provider's policy refuses it; it is not applied. */
  | { type: 'REJECT'; problems: string[] }
  /** The consumer is no longer wanted: remove its login. */
  | { type: 'REMOVE' }
  /** Ask the backend now rather than at the next check. */
  | { type: 'CHECK_NOW' }
  /** Apply again now, whatever the last check said. */
  | { type: 'REAPPLY' }
  /** The record was found mid-effect (its worker died): perform the effect again. */
  | { type: 'REDO' }
  /** An operator pauses the consumer: its login is left as it is and not checked until resumed. */
  | { type: 'SUSPEND' }
  /** An operator ends a suspension: the consumer is asked now, and applied again if need be. */
  | { type: 'RESUME' };

/** Results of the effects the machine asked for. */
export type ResultEvent =
  /** `apply` succeeded with this spec and this secret's fingerprint. */
  | { type: 'APPLIED'; specHash: string; secretMac: string }
  /**
   * `apply` failed; `error` is scrubbed words; `timedOut`: its deadline passed (a backend slow under load: retried, as
   * any failed apply).
   */
  | { type: 'APPLY_FAILED'; error: string; timedOut?: boolean }
  /**
   * `apply`: the backend (or the adapter, before sending anything) refuses until someone acts
   * (a role holdfast did not make, roles a server cannot grant); trying again after a wait would
   * change nothing. `error` is scrubbed words.
   */
  | { type: 'APPLY_REFUSED'; error: string }
  /**
   * `check`: the backend holds the consumer. `secretMac`: the grant secret's fingerprint, when the one the context keeps
   * differs (made under another fingerprint key) and the backend, asked deeply, holds the consumer with this secret:
   * kept from now on, nothing applied.
   */
  | { type: 'HELD'; secretMac?: string }
  /**
   * `check`: the backend does not hold the consumer; `reason` is the adapter's word for why (`missing`,
   * `rules-differ`…).
   */
  /**
   * `node`: on a backend of several nodes, the node(s) that do not hold it (`10.0.0.6:6379`); the others do.
   * `forgot`: each of them began holding none of its logins (a new run, a new data directory, a node that joined)
   * after the consumer was last asked: the backend forgot, it did not disagree, so the brake does not count it.
   */
  | { type: 'NOT_HELD'; reason: string; detail: string; node?: string; forgot?: true }
  /**
   * `apply`/`check` on a provider that only observes (`management: observe`): the backend does
   * not hold the consumer as declared, and holdfast may not change that.
   */
  | { type: 'NOT_APPLIED'; reason: string; detail: string }
  /** `check` could not ask: the backend threw, timed out, or its provider is paused. */
  | { type: 'CHECK_FAILED'; error: string; timedOut: boolean }
  /** `check` found the grant secret or the spec changed since it was applied. */
  | { type: 'CHANGED'; what: string }
  /** `apply`/`check`: the grant secret file does not exist. */
  | { type: 'SECRET_MISSING'; path: string }
  /** `apply`/`check`: the grant secret exists but cannot be read (path, owner, mode, uid). */
  | { type: 'SECRET_UNREADABLE'; detail: string }
  /**
   * `apply`/`check`: the grant secret was read but cannot be a password (empty, too short or long, not text); `detail`
   * names the file and what is wrong, never the content.
   */
  | { type: 'SECRET_INVALID'; detail: string }
  /** `remove` succeeded (or the login was already absent). */
  | { type: 'REMOVED' }
  /** `remove` failed. */
  | { type: 'REMOVE_FAILED'; error: string }
  /**
   * `remove`: the backend refuses until someone acts (a PostgreSQL role that still owns
   * objects); trying again after a wait would change nothing. `error` is scrubbed words.
   */
  | { type: 'REMOVE_REFUSED'; error: string };

export type ConsumerEvent = CommandEvent | ResultEvent;

/** Something the log must say, composed by the machine. */
export interface Announcement {
  level: 'info' | 'warn' | 'error';
  message: string;
  /** Structured fields the log line carries beside its words, for a reader that filters on kinds, not text. */
  fields?: AnnouncedFields;
}

/** What an announcement may carry beside its words: `timedOut`, a failure whose deadline passed. */
export interface AnnouncedFields {
  timedOut?: true;
}
