/**
 * Redis's `ACL LOG` reply read into entries: only what failed-login attribution needs, every
 * field bounded and inert (the username tried and the client's address are a tenant's text).
 * Redis 7.0 gives `count`, `reason`, `context`, `object`, `username`, `age-seconds` (since the
 * entry was last updated: a grouped entry's is reset at each failure) and `client-info` (the
 * last client's); Redis 7.2 adds `entry-id`, `timestamp-created` and `timestamp-last-updated`.
 */
import { boundedField, FAILED_ADDRESS_CHARS, FAILED_LOGIN_CHARS } from '../login-failures.js';

/** One `ACL LOG` entry of reason `auth`. */
export interface AclLogEntry {
  /** Redis 7.2+: the entry's id, increasing per server run; undefined on 7.0. */
  entryId: number | undefined;
  count: number;
  /** The login tried (bounded, inert). */
  username: string;
  /** Where it was tried: `toplevel`, `multi`, `lua`; and with which command (`AUTH`, `HELLO`). */
  context: string;
  object: string;
  /** The last client's address (`addr=` of `client-info`; bounded, inert), `unknown` when absent. */
  address: string;
  /** When the entry was last updated (ms since the epoch, from the reply or its age at `readAt`). */
  lastUpdated: number;
}

/** A flat `[field, value, …]` array as a map of its string and number values. */
function fieldsOf(raw: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  if (!Array.isArray(raw)) return fields;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const value: unknown = raw[i + 1];
    if (typeof value === 'string' || typeof value === 'number') fields.set(String(raw[i]), String(value));
    else if (Buffer.isBuffer(value)) fields.set(String(raw[i]), value.toString('utf8'));
  }
  return fields;
}

/** `addr=` of a `client-info` line. */
function addressOf(clientInfo: string | undefined): string {
  const addr = /(?:^| )addr=(\S+)/.exec(clientInfo ?? '')?.[1];
  return addr === undefined ? 'unknown' : boundedField(addr, FAILED_ADDRESS_CHARS);
}

/** A finite number of the field, or undefined. */
function numberOf(fields: Map<string, string>, name: string): number | undefined {
  const value = fields.get(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The `auth` entries of an `ACL LOG <count>` reply read at `readAt` (ms), newest first as Redis lists them. */
export function authEntries(reply: unknown, readAt: number): AclLogEntry[] {
  if (!Array.isArray(reply)) return [];
  const entries: AclLogEntry[] = [];
  for (const raw of reply) {
    const fields = fieldsOf(raw);
    const count = numberOf(fields, 'count');
    if (fields.get('reason') !== 'auth' || count === undefined || count < 1) continue;
    const updated = numberOf(fields, 'timestamp-last-updated');
    const age = numberOf(fields, 'age-seconds') ?? 0;
    entries.push({
      entryId: numberOf(fields, 'entry-id'),
      count: Math.floor(count),
      username: boundedField(fields.get('username') ?? '', FAILED_LOGIN_CHARS),
      context: boundedField(fields.get('context') ?? '', 16),
      object: boundedField(fields.get('object') ?? '', 16),
      address: addressOf(fields.get('client-info')),
      lastUpdated: updated ?? Math.round(readAt - age * 1000),
    });
  }
  return entries;
}
