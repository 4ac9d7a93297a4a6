/**
 * A record's nested parts as JSON text, the form documents have since version 3 (told apart from
 * earlier ones by form: a string where a sub-document was). The reason is the store's cost:
 * FerretDB's SQLite handler keeps a type schema beside every value it stores, and converts every
 * one on each read and write, so a record costs it by the number of values, not by bytes. Measured
 * on a 5,000-record collection (bulks of 64 updates by `_id`, indexed): nested, with a history of
 * 20 transitions, 2.47 ms per update and 2.76 ms per `findOne`; the same content with these parts
 * as text, 0.86 and 1.27 ms.
 *
 * Only `record-codec.ts` calls these; decoding here only parses: the codec validates what it reads
 * in either form. Times inside the text are milliseconds since the epoch.
 */
import type { DesiredSpec, HistoryEntry, LastCheck, MachineRecord, WaitRecord } from './consumer-record.js';

/** Thrown on text that is not JSON; `record-codec.ts` says so as the record's unreadable reason. */
export class TextRefusal extends Error {}

function parsed(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TextRefusal(`its ${what} is not JSON text`);
  }
}

const at = (ms: unknown): unknown => (typeof ms === 'number' ? new Date(ms) : ms);
const tuple = (text: string, what: string): unknown[] => {
  const value = parsed(text, what);
  if (!Array.isArray(value)) throw new TextRefusal(`its ${what} is not a list`);
  return value;
};

export const storedMachine = (machine: MachineRecord): string => JSON.stringify(machine);
export const machineFromText = (text: string): unknown => parsed(text, 'machine');

export const storedDesired = (spec: DesiredSpec): string => JSON.stringify(spec);
export const desiredFromText = (text: string): unknown => parsed(text, 'desired spec');

/**
 * Each transition as `[at, from, to, reason]`, then its cause and node where it has them (`[…, by, node]`; earlier
 * documents have four).
 */
export const storedHistory = (history: readonly HistoryEntry[]): string => JSON.stringify(history.map(historyTuple));
function historyTuple(h: HistoryEntry): unknown[] {
  const tuple: unknown[] = [h.at.getTime(), h.from, h.to, h.reason];
  if (h.node !== undefined) tuple.push(h.by ?? null, h.node);
  else if (h.by !== undefined) tuple.push(h.by);
  return tuple;
}
export function historyFromText(text: string): unknown[] {
  return tuple(text, 'history').map((entry: unknown) => {
    if (!Array.isArray(entry)) return entry;
    const [when, from, to, reason, by, node] = entry as unknown[];
    return { at: at(when), from, to, reason, by, node };
  });
}

/** `[at, outcome, detail]`. */
export const storedCheck = (check: LastCheck | null): string | null =>
  check ? JSON.stringify([check.at.getTime(), check.outcome, check.detail]) : null;
export function checkFromText(text: string): unknown {
  const [when, outcome, detail] = tuple(text, 'last check');
  return { at: at(when), outcome, detail };
}

/** `[rev, wait, dueAt]`. */
export const storedTimer = (timer: WaitRecord | null): string | null =>
  timer ? JSON.stringify([timer.rev, timer.wait, timer.dueAt.getTime()]) : null;
export function timerFromText(text: string): unknown {
  const [rev, wait, dueAt] = tuple(text, 'timer');
  return { rev, wait, dueAt: at(dueAt) };
}
