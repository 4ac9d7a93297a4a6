/**
 * The consumer's side in the status: each provider's consumers *turned away* (their login held,
 * their app failing to log in, as the backend's log recorded), the failed logins of logins no
 * consumer claims (counted only), and the nodes whose log may have dropped entries. Shown, not
 * red: the backend holds what was declared, and a tenant's app alone must not turn holdfast's
 * health red; the alert `HoldfastConsumerTurnedAway` warns.
 */
import { formatDuration } from '../config/duration.js';
import type { FailedLoginsNote } from '../queue/coordination.js';

/** A consumer turned away, as the status shows it (JSON). */
export interface TurnedAwayStatus {
  consumer: string;
  /** Failed logins within the window. */
  failedLogins: number;
  /** The client addresses they came from, most recent first (a tenant's text: shown inert). */
  addresses: string[];
  /** When the last was recorded. */
  lastAt: string;
}

/** A provider's failed logins within the window, as last read (null: its backend's log is not read, or not lately). */
export interface FailedLoginsStatus {
  at: string;
  windowMs: number;
  /** Consumers turned away (listed: the first of them). */
  count: number;
  consumers: TurnedAwayStatus[];
  /** Failed logins of logins no consumer claims (never attributed). */
  unattributed: number;
  /** Nodes whose log may have dropped entries before they were read. */
  lost: string[];
}

export function failedLoginsOf(note: FailedLoginsNote | undefined): FailedLoginsStatus | null {
  if (!note) return null;
  const consumers = note.consumers.map((c) => ({
    consumer: c.key,
    failedLogins: c.count,
    addresses: [...new Set(c.events.map((e) => e.address))],
    lastAt: new Date(Math.max(...c.events.map((e) => e.at))).toISOString(),
  }));
  return {
    at: note.at,
    windowMs: note.windowMs,
    count: consumers.length + note.more,
    consumers,
    unattributed: note.unattributed,
    lost: note.lost,
  };
}

/** `cache/photos: 37 failed logins from 10.0.0.7 in the last 5m (wrong password)`. */
export function turnedAwayWords(c: TurnedAwayStatus, windowMs: number): string {
  const n = c.failedLogins;
  const from = `${c.addresses.slice(0, 5).join(', ')}${c.addresses.length > 5 ? `, … ${c.addresses.length - 5} more` : ''}`;
  return `${c.consumer}: ${n} failed login${n === 1 ? '' : 's'} from ${from} in the last ${formatDuration(windowMs)} (wrong password), last at ${c.lastAt}`;
}

/** The provider's lines in `holdfast status` (not inert yet). */
export function failedLoginsLines(f: FailedLoginsStatus | null): string[] {
  if (!f) return [];
  const lines: string[] = [];
  const window = formatDuration(f.windowMs);
  if (f.count > 0) {
    lines.push(
      `  turned away: ${f.count} consumer${f.count === 1 ? '' : 's'} held, whose app fails to log in (the backend refuses the password it uses)`,
      ...f.consumers.map((c) => `    ${turnedAwayWords(c, f.windowMs)}`),
    );
    if (f.count > f.consumers.length) lines.push(`    … and ${f.count - f.consumers.length} more`);
  }
  if (f.unattributed > 0)
    lines.push(`  failed logins of logins no consumer claims: ${f.unattributed} in the last ${window}`);
  if (f.lost.length > 0)
    lines.push(
      `  failed logins may have been missed on ${f.lost.join(', ')} (its log was full before it was read) in the last ${window}`,
    );
  return lines;
}
