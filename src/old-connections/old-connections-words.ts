/** How old connections are said, the same in the log, the status and the page. */
import type { OldConnections } from '../queue/rotation-notes.js';

/** `06:05:02 UTC`: a moment of today as the lines name it. */
export function clockOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/** `2 connections from before the rotation at 06:05:02 UTC (10.0.0.7:5123, 10.0.0.8:6001)`. */
export function oldConnectionsWords({
  count,
  addresses,
  at,
}: Pick<OldConnections, 'count' | 'addresses' | 'at'>): string {
  const more = count > addresses.length ? ', …' : '';
  const list = addresses.length > 0 ? ` (${addresses.join(', ')}${more})` : '';
  return `${count} connection${count === 1 ? '' : 's'} from before the rotation at ${clockOf(at)}${list}`;
}

/** A consumer's line: `cache/photos: 2 connections from before the rotation at 06:05:02 UTC (…); the old password dropped at 06:07:10 UTC`. */
export function oldConnectionsLine(key: string, found: OldConnections): string {
  const cut = found.cutAt !== undefined ? `; the old password dropped at ${clockOf(found.cutAt)}` : '';
  return `${key}: ${oldConnectionsWords(found)}${cut}`;
}
