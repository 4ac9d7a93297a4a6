/**
 * `CLIENT LIST TYPE normal` read for the connections of some logins (`user=`), each with its
 * client's address (`addr=`) and the latest moment it can have been established (`age=` counts
 * whole seconds of the server's clock, so a connection may be up to a second younger than it says).
 * A busy Redis has thousands of clients: the reply is read once per node and pass, line by line,
 * and only the lines of the logins asked are kept.
 */
import type { LoginSession } from '../adapter.js';

/** The fields of one `CLIENT LIST` line (space-separated `key=value`; Redis allows no space in a value). */
function fieldsOf(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const token of line.trim().split(' ')) {
    const eq = token.indexOf('=');
    if (eq > 0) fields.set(token.slice(0, eq), token.slice(eq + 1));
  }
  return fields;
}

/**
 * The connections of `logins` in a `CLIENT LIST` reply, as of `now` (ms since the epoch); those whose client address
 * is in `own` (holdfast's own connections) left out.
 */
export function sessionsOfClientList(
  reply: string,
  logins: ReadonlySet<string>,
  now: number,
  own: ReadonlySet<string> = new Set(),
): LoginSession[] {
  const sessions: LoginSession[] = [];
  for (const line of reply.split('\n')) {
    // the login first, found without splitting the line: most lines are other clients'
    const at = line.indexOf(' user=');
    if (at === -1) continue;
    const end = line.indexOf(' ', at + 6);
    if (!logins.has(line.slice(at + 6, end === -1 ? undefined : end).trim())) continue;
    const fields = fieldsOf(line);
    const login = fields.get('user') ?? '';
    const address = fields.get('addr') ?? 'unknown';
    const age = Number(fields.get('age'));
    if (own.has(address) || !Number.isFinite(age) || age < 0) continue;
    // `age` counts whole seconds of the server's clock: the connection began at the latest (age - 1) s before now
    sessions.push({ login, address, startedAt: now - Math.max(0, age - 1) * 1000 });
  }
  return sessions;
}

/** A socket's local address as Redis names its client (`127.0.0.1:51234`, `[::1]:51234` as `::1:51234`). */
export function clientAddress(localAddress: string | undefined, localPort: number | undefined): string | undefined {
  if (localAddress === undefined || localPort === undefined) return undefined;
  return `${localAddress.replace(/^::ffff:/, '')}:${localPort}`;
}
