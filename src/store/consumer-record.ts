/**
 * One consumer's durable record: the machine (state, context) and its revision, the desired
 * spec last delivered to it, when it was applied, its wait and a short history. Only the worker
 * that holds the consumer's lock writes it. Never a password.
 *
 * These are the record's types as this version of holdfast reads them: the store decodes every
 * document once, at its edge (`record-codec.ts`), into a {@link ConsumerRecord} of this version,
 * whichever version wrote it, or into an {@link UnreadableRecord} saying why it cannot.
 */
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import type { PersistedConsumer, WaitName } from '../../machines/machine-step.js';
import type { TransitionCause } from './transition-cause.js';

/** A consumer as the contributions declare it (no secret: only where to read it). */
export interface DesiredSpec {
  login: string;
  values: unknown;
  secretPath: string;
  /** sha256 over login, values and secretPath; changes when the spec does. */
  specHash: string;
  /** Where it was declared, e.g. `/etc/holdfast/cache.yaml:12`. */
  source: string;
  /** The consumer is no longer declared: it is to be removed. */
  removed: boolean;
  /** The provider's policy refuses it (sentences naming the fields); it is not applied. */
  problems: string[];
}

/** A new spec the provider's policy refused for a consumer that keeps its last accepted one. */
export interface RefusedSpec {
  /** Where it was declared, e.g. `/etc/holdfast/cache.yaml:12`. */
  source: string;
  /** Why, each naming file, line and field. */
  problems: string[];
}

/** A wait the machine asked for, kept in the due set at `rev` (see `src/schedule/due-waits.ts`). */
export interface WaitRecord {
  /** The revision that scheduled it: a job carrying another revision is stale. */
  rev: number;
  wait: WaitName;
  /** When the wait first ends; a routine check reschedules its own job without writing here. */
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
  /** Who caused it (absent in entries written before holdfast kept it). */
  by?: TransitionCause;
  /** On a backend of several nodes, the node(s) it concerned (`10.0.0.6:6379`); absent otherwise. */
  node?: string;
}

/**
 * The machine as a stored document and a check's ticket carry it: the version of the chart that
 * wrote it (see `machines/machine-step.ts`) beside its state and context. Made and read only by
 * `record-codec.ts`; everything else works with the decoded {@link PersistedConsumer}.
 */
export interface MachineRecord extends PersistedConsumer {
  version: number;
}

export interface ConsumerRecord {
  /** `<provider>/<id>`. */
  _id: string;
  provider: string;
  consumerId: string;
  /** The desired spec last delivered to the machine (the last accepted one, while a newer one is refused). */
  desired: DesiredSpec;
  /** A newer spec the policy refused, while the consumer keeps `desired` (absent or null: none). */
  refused?: RefusedSpec | null;
  /** When the desired-state sync read that spec (ms since the epoch): an older delivery is stale. */
  desiredAt: number;
  /** The machine, in this version's shape. */
  machine: PersistedConsumer;
  stateSince: Date;
  /** Counts the record's writes; a wait of another revision is stale. */
  rev: number;
  /** When the spec was last applied successfully. */
  appliedAt: Date | null;
  timer: WaitRecord | null;
  /**
   * While an effect other than a check is in flight: when its deadline (plus a margin) ends.
   * A record in an effect state before that time is being acted on; after it, its worker died.
   */
  effectUntil: Date | null;
  /** The last check as of the last write; the fresher one lives in the queue's Redis. */
  lastCheck: LastCheck | null;
  /** The most recent transitions, newest last. */
  history: HistoryEntry[];
  createdAt: Date;
  updatedAt: Date;
}

/** How many transitions a record remembers. */
export const HISTORY_LENGTH = 20;

/**
 * A stored document this holdfast cannot read: written by a newer version, or damaged. It is
 * never acted on nor written over; the status reports it, red, until it can be read.
 */
export interface UnreadableRecord {
  /** The document's `_id`: the consumer's key, if it is one. */
  _id: string;
  /** Why, in words. */
  unreadable: string;
  /** What could still be read of it, for the status: its revision, since when, its login. */
  rev: number | null;
  since: Date | null;
  login: string | null;
}

/** A record as the store returns it: readable, or saying why not. */
export type StoredConsumer = ConsumerRecord | UnreadableRecord;

export function isUnreadable(record: StoredConsumer): record is UnreadableRecord {
  return 'unreadable' in record;
}
