/**
 * One consumer's durable record: the machine's snapshot and revision, the desired spec, the
 * fingerprint of what was applied, the next due time and a short history. Never a password.
 */
import type { ConsumerStateName } from '../../machines/consumer-machine.js';

/** The spec the desired-state sync last wrote (no secret: only where to read it). */
export interface DesiredSpec {
  login: string;
  values: unknown;
  secretPath: string;
  specHash: string;
  source: string;
  /** The consumer is no longer declared: it is to be removed. */
  removed: boolean;
  /** The provider's policy refuses it (sentences naming the fields); it is not applied. */
  problems: string[];
}

/** A wait the machine asked for, turned into a delayed job `<key>@<epoch>`. */
export interface TimerRecord {
  /** The revision that scheduled it: a job carrying another epoch is stale. */
  epoch: number;
  /** The XState event the job delivers, e.g. `xstate.after.verify.consumer.held`. */
  event: string;
  dueAt: Date;
}

export interface LastCheck {
  at: Date;
  outcome: 'held' | 'not-held' | 'could-not-ask' | 'changed';
  detail: string | null;
}

export interface HistoryEntry {
  at: Date;
  from: ConsumerStateName;
  to: ConsumerStateName;
  reason: string | null;
}

export interface ConsumerRecord {
  /** `<provider>/<id>`. */
  _id: string;
  provider: string;
  consumerId: string;
  desired: DesiredSpec;
  /** The desired spec changed since a worker last delivered it to the machine. */
  dirty: boolean;
  /** Counts the sync's writes of `desired`: a worker clears `dirty` only for the one it loaded. */
  desiredRev: number;
  /** The machine's persisted snapshot, keys encoded for the wire server (see key-codec). */
  snapshot: unknown;
  /** The snapshot's state, for queries and the status. */
  state: ConsumerStateName;
  stateSince: Date;
  /** Compare-and-swap revision: every write by a worker increments it. */
  rev: number;
  /** The keyed fingerprints of what was last applied (HMAC of the secret, hash of the spec). */
  applied: { specHash: string; secretMac: string; at: Date } | null;
  timer: TimerRecord | null;
  /** When something must happen next (a timer, or the end of an effect's lease); null when nothing is due. */
  nextDueAt: Date | null;
  lastCheck: LastCheck | null;
  /** The most recent transitions, newest last. */
  history: HistoryEntry[];
  /**
   * While an apply or a remove is in flight: when its deadline (plus a margin) ends. A record
   * in an effect state before that time is being acted on; after it, its worker died.
   */
  effectUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** How many transitions a record remembers. */
export const HISTORY_LENGTH = 20;
