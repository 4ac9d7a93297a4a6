/**
 * Failed logins a backend recorded (Redis: `ACL LOG`, reason `auth`), as an adapter reads them
 * (`Adapter.failedLogins`): only what is new since its last read of each node, every field
 * bounded and made inert (the login tried and the client's address are a tenant's text).
 */
import { inertText } from '../text/terminal-text.js';

/** A login as recorded, in characters at most (longer is cut; a login holdfast manages is far shorter). */
export const FAILED_LOGIN_CHARS = 128;
/** A client's address as recorded (`10.0.0.7:51234`), in characters at most. */
export const FAILED_ADDRESS_CHARS = 64;

/** Failed logins of one login, from one client address, on one node, new since the node's last read. */
export interface FailedLogin {
  /** The login the client tried (inert, bounded). */
  login: string;
  /** The client's address as the server saw it, `host:port` (inert, bounded); `unknown` when not recorded. */
  address: string;
  /** How many failed logins, new since the last read. */
  count: number;
  /** When the last of them was recorded (ms since the epoch). */
  at: number;
  /** The node that recorded them (`host:port`). */
  node: string;
}

/** One read of every node's failed logins. */
export interface FailedLoginsRead {
  failures: FailedLogin[];
  /** The nodes whose log was read. */
  nodes: string[];
  /**
   * The nodes whose log may have dropped entries since their last read (it was full and held none already read): some
   * failed logins there were not seen.
   */
  lost: string[];
}

/** `text` made inert (control and format characters escaped) and cut to `chars`. */
export function boundedField(text: string, chars: number): string {
  const inert = inertText(text);
  return inert.length > chars ? `${inert.slice(0, chars - 1)}…` : inert;
}
