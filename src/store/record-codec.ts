/**
 * The one place that knows how a consumer's record is stored. A document is decoded here, once,
 * into this version's {@link ConsumerRecord}, whichever version of holdfast wrote it, or into an
 * {@link UnreadableRecord} saying why it cannot be: a decode never throws. The machine's own
 * versions are migrated by `readPersisted` (`machines/machine-step.ts`), called from here alone.
 *
 * Version 1 (records written before machine versions) kept XState's whole snapshot in
 * `snapshot` instead of `machine`, `applied: { at }` instead of `appliedAt`, no `desiredAt`, and
 * a timer naming XState's event (`xstate.after.<wait>.consumer.<state>`) instead of its wait.
 * A record keeps whatever it does not rewrite: each field is read from the form it has.
 *
 * Since version 3 of the document (no version field: told apart by form) the nested parts, the
 * machine, the desired spec, the history, the last check and the timer, are stored as JSON text
 * (`record-text.ts`): FerretDB's cost per operation grows with the number of values it converts,
 * not with bytes. Earlier documents keep them as sub-documents, and are read as they are.
 */
import {
  MACHINE_VERSION,
  readPersisted,
  WAIT_NAMES,
  type PersistedConsumer,
  type WaitName,
} from '../../machines/machine-step.js';
import { currentStateName } from '../../machines/former-states.js';
import type {
  ConsumerRecord,
  DesiredSpec,
  HistoryEntry,
  LastCheck,
  MachineRecord,
  RefusedSpec,
  StoredConsumer,
  WaitRecord,
  UnreadableRecord,
} from './consumer-record.js';
import { decodeKeys, encodeKeys } from './key-codec.js';
import { causeOf, nodeOf } from './transition-cause.js';
import {
  TextRefusal,
  checkFromText,
  desiredFromText,
  historyFromText,
  machineFromText,
  storedCheck,
  storedDesired,
  storedHistory,
  storedMachine,
  storedTimer,
  timerFromText,
} from './record-text.js';

type Fields = Record<string, unknown>;

/** A record as it is stored, by whichever version wrote it: read only through {@link decodeRecord}. */
export interface RecordDocument {
  _id: string;
  [field: string]: unknown;
}

/** Why a document cannot be read; thrown inside this file only, and caught by {@link decodeRecord}. */
class Refusal extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

function refuse(why: string): never {
  throw new Refusal(why);
}

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function fields(value: unknown, what: string): Fields {
  return isFields(value) ? value : refuse(`its ${what} is not a document`);
}

function text(value: unknown, what: string): string {
  return typeof value === 'string' ? value : refuse(`its ${what} is not a string`);
}

function texts(value: unknown, what: string): string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
    ? value
    : refuse(`its ${what} is not a list of strings`);
}

function date(value: unknown, what: string): Date {
  return value instanceof Date ? value : refuse(`its ${what} is not a date`);
}

function dateOrNull(value: unknown, what: string): Date | null {
  return value === undefined || value === null ? null : date(value, what);
}

function count(value: unknown, what: string): number {
  return Number.isSafeInteger(value) && (value as number) >= 0
    ? (value as number)
    : refuse(`its ${what} is not a count`);
}

/** The machine as a document or a ticket carries it, in this version's shape, or why it cannot be read. */
export function decodeMachine(stored: unknown): { consumer: PersistedConsumer } | { problem: string } {
  const version = isFields(stored) ? stored.version : undefined;
  if (version !== undefined && !Number.isSafeInteger(version))
    return { problem: 'its machine version is not a number' };
  return readPersisted(version as number | undefined, stored);
}

/** The machine as it is stored and carried. */
export function encodeMachine(machine: PersistedConsumer): MachineRecord {
  return { version: MACHINE_VERSION, state: machine.state, context: machine.context };
}

function machineOf(doc: Fields): PersistedConsumer {
  // version 1 kept XState's whole snapshot, keys encoded, under `snapshot`
  if (typeof doc.machine === 'string') return orRefuse(decodeMachine(machineFromText(doc.machine)));
  const stored =
    doc.machine ?? (doc.snapshot === undefined ? undefined : { version: 1, ...decodeKeys<object>(doc.snapshot) });
  if (stored === undefined) refuse('it has no machine');
  return orRefuse(decodeMachine(stored));
}

function orRefuse(read: { consumer: PersistedConsumer } | { problem: string }): PersistedConsumer {
  return 'consumer' in read ? read.consumer : refuse(read.problem);
}

function desiredOf(value: unknown): DesiredSpec {
  // as text, its keys are kept as they are (no wire-server key rules inside a string)
  const asText = typeof value === 'string';
  const d = fields(asText ? desiredFromText(value) : value, 'desired spec');
  if (typeof d.removed !== 'boolean') refuse('its desired spec does not say whether it is removed');
  return {
    login: text(d.login, 'desired login'),
    values: asText ? d.values : decodeKeys(d.values),
    secretPath: text(d.secretPath, 'desired secret path'),
    specHash: text(d.specHash, 'desired spec hash'),
    source: text(d.source, 'desired source'),
    removed: d.removed,
    problems: texts(d.problems, 'desired problems'),
  };
}

function refusedOf(value: unknown): RefusedSpec | null {
  if (value === undefined || value === null) return null;
  const r = fields(value, 'refused spec');
  return { source: text(r.source, 'refused source'), problems: texts(r.problems, 'refused problems') };
}

const WAITS: ReadonlySet<string> = new Set<string>(WAIT_NAMES);
/** Version 1's timers named the event XState raises when a wait ends. */
const VERSION_ONE_EVENT = /^xstate\.after\.([A-Za-z]+)\./;

function timerOf(value: unknown): WaitRecord | null {
  if (value === undefined || value === null) return null;
  const t = fields(typeof value === 'string' ? timerFromText(value) : value, 'timer');
  const wait = t.wait ?? (typeof t.event === 'string' ? VERSION_ONE_EVENT.exec(t.event)?.[1] : undefined);
  if (typeof wait !== 'string' || !WAITS.has(wait))
    refuse(`its timer names no wait of this holdfast (${WAIT_NAMES.join(', ')})`);
  // a sub-document (before version 3) names the revision `epoch`
  return {
    rev: count(t.rev ?? t.epoch, 'timer revision'),
    wait: wait as WaitName,
    dueAt: date(t.dueAt, 'timer due time'),
  };
}

function appliedAtOf(doc: Fields): Date | null {
  if (doc.appliedAt !== undefined) return dateOrNull(doc.appliedAt, 'time of apply');
  return isFields(doc.applied) ? date(doc.applied.at, 'time of apply') : null; // version 1
}

const OUTCOMES: ReadonlySet<string> = new Set<LastCheck['outcome']>(['held', 'not-held', 'could-not-ask', 'changed']);

function lastCheckOf(value: unknown): LastCheck | null {
  if (value === undefined || value === null) return null;
  const c = fields(typeof value === 'string' ? checkFromText(value) : value, 'last check');
  if (typeof c.outcome !== 'string' || !OUTCOMES.has(c.outcome))
    refuse('its last check has no outcome of this holdfast');
  const detail = c.detail === null || c.detail === undefined ? null : text(c.detail, 'last check detail');
  return { at: date(c.at, 'last check time'), outcome: c.outcome as LastCheck['outcome'], detail };
}

function isHistoryEntry(entry: unknown): entry is HistoryEntry {
  if (!isFields(entry)) return false;
  const { at, from, to, reason } = entry;
  return (
    at instanceof Date &&
    typeof from === 'string' &&
    typeof to === 'string' &&
    (reason === null || typeof reason === 'string')
  );
}

/**
 * An entry as this version keeps it: its states in this chart's words (an entry an earlier release wrote may name them
 * as it did), its cause and node when it has ones this holdfast knows (an unknown cause reads as none).
 */
function historyEntry({
  at,
  from,
  to,
  reason,
  by,
  node,
}: HistoryEntry & { by?: unknown; node?: unknown }): HistoryEntry {
  const cause = causeOf(by);
  const where = nodeOf(node);
  const state = (name: string) => currentStateName(name) as HistoryEntry['from'];
  return {
    at,
    from: state(from),
    to: state(to),
    reason,
    ...(cause ? { by: cause } : {}),
    ...(where ? { node: where } : {}),
  };
}

function historyOf(value: unknown): HistoryEntry[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? historyFromText(value) : value;
  if (!Array.isArray(list)) refuse('its history is not a list');
  return list.every(isHistoryEntry)
    ? list.map(historyEntry)
    : refuse('its history has an entry that is not a transition');
}

function recordOf(doc: Fields, key: string): ConsumerRecord {
  const record: ConsumerRecord = {
    _id: key,
    provider: text(doc.provider, 'provider'),
    consumerId: text(doc.consumerId, 'consumer id'),
    desired: desiredOf(doc.desired),
    desiredAt: doc.desiredAt === undefined ? 0 : count(doc.desiredAt, 'time of delivery'), // version 1: none
    machine: machineOf(doc),
    stateSince: date(doc.stateSince, 'state start'),
    rev: count(doc.rev, 'revision'),
    appliedAt: appliedAtOf(doc),
    timer: timerOf(doc.timer),
    effectUntil: dateOrNull(doc.effectUntil, 'effect deadline'),
    lastCheck: lastCheckOf(doc.lastCheck),
    history: historyOf(doc.history),
    createdAt: date(doc.createdAt, 'creation time'),
    updatedAt: date(doc.updatedAt, 'update time'),
  };
  const refused = refusedOf(doc.refused);
  return refused ? { ...record, refused } : record;
}

/** What can still be read of a document that cannot be decoded, for the status. */
function unreadable(doc: Fields, key: string, why: string): UnreadableRecord {
  const desired = isFields(doc.desired) ? doc.desired : typeof doc.desired === 'string' ? loginOf(doc.desired) : {};
  return {
    _id: key,
    unreadable: why,
    rev: Number.isSafeInteger(doc.rev) && (doc.rev as number) >= 0 ? (doc.rev as number) : null,
    since: doc.stateSince instanceof Date ? doc.stateSince : null,
    login: typeof desired.login === 'string' ? desired.login : null,
  };
}

/** A stored document as a record of this version, or why it cannot be one. Never throws. */
export function decodeRecord(raw: unknown): StoredConsumer {
  const doc = isFields(raw) ? raw : {};
  const key = typeof doc._id === 'string' ? doc._id : String(doc._id);
  try {
    if (!key.includes('/')) refuse('its key is not <provider>/<id>');
    return recordOf(doc, key);
  } catch (error) {
    return unreadable(
      doc,
      key,
      error instanceof Refusal ? error.why : error instanceof TextRefusal ? error.message : `damaged: ${String(error)}`,
    );
  }
}

/** What can be read of a desired spec's text that does not decode as a whole. */
function loginOf(text: string): Fields {
  try {
    const parsed: unknown = JSON.parse(text);
    return isFields(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** A desired spec as documents before version 3 stored it: keys encoded for the wire server (see `key-codec.ts`). */
export function encodeDesired(spec: DesiredSpec): DesiredSpec {
  return { ...spec, values: encodeKeys(spec.values) };
}

/** The parts of a record a write sets, as they are stored (see `record-text.ts`). */
export const stored = {
  machine: (machine: PersistedConsumer) => storedMachine(encodeMachine(machine)),
  desired: storedDesired,
  history: storedHistory,
  lastCheck: storedCheck,
  timer: storedTimer,
};

/** The document a record is stored as. */
export function encodeRecord(record: ConsumerRecord): RecordDocument {
  return {
    ...record,
    machine: stored.machine(record.machine),
    desired: stored.desired(record.desired),
    history: stored.history(record.history),
    lastCheck: stored.lastCheck(record.lastCheck),
    timer: stored.timer(record.timer),
  };
}
