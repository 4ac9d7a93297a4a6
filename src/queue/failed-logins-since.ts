/**
 * The one question a rotation asks of a consumer's failed logins: did its app fail to log in
 * since a time (the rotation), and from where? Read from the provider's failed-logins note (the
 * reader of its backend's log writes it every interval, `src/engine/failed-logins-watch.ts`),
 * so it reaches no backend; what it knows spans the note's window.
 */
import { providerOf } from '../store/consumer-key.js';
import type { NoteReads } from './coordination.js';

/** A consumer's failed logins since a time, as last noted. */
export interface FailedLoginsSince {
  /** Failed logins recorded at or after the time (0: none noted). */
  count: number;
  /** The client addresses they came from, most recent first. */
  addresses: string[];
  /** When the last was recorded (ms), null when none. */
  lastAt: number | null;
  /**
   * Whether the answer can be trusted to say "none": false when no note of the provider is there (no reader ran
   * lately), when the time is older than the note's window, or when entries of the backend's log may have been lost.
   */
  known: boolean;
}

/** The failed logins of consumer `key` recorded at or after `sinceMs` (ms since the epoch). */
export async function failedLoginsSince(
  notes: Pick<NoteReads, 'failedLogins'>,
  key: string,
  sinceMs: number,
): Promise<FailedLoginsSince> {
  const provider = providerOf(key);
  const note = (await notes.failedLogins([provider])).get(provider);
  const events = (note?.consumers.find((c) => c.key === key)?.events ?? []).filter((e) => e.at >= sinceMs);
  const addresses = [...new Set(events.map((e) => e.address))];
  const noteAt = note ? Date.parse(note.at) : NaN;
  const known = note !== undefined && note.lost.length === 0 && sinceMs >= noteAt - note.windowMs;
  return {
    count: events.reduce((n, e) => n + e.count, 0),
    addresses,
    lastAt: events.length > 0 ? Math.max(...events.map((e) => e.at)) : null,
    known,
  };
}
