/**
 * Old connections in the status (`src/old-connections/old-connections-watch.ts`): per provider, its
 * consumers with connections from before their latest rotation (the clients that logged in with
 * the old password), the most first, each in one line: `cache/photos: 2 connections from before the
 * rotation at 06:05:02 UTC (10.0.0.7:5123, 10.0.0.8:6001)`. Shown, not red: the login is held.
 */
import { oldConnectionsLine } from '../old-connections/old-connections-words.js';
import type { OldConnections } from '../queue/rotation-notes.js';

/** Consumers listed per provider at most (the rest are counted). */
export const OLD_CONNECTIONS_LISTED = 20;

/** A consumer's connections from before its rotation, as the status shows them (JSON). */
export interface OldConnectionsStatus {
  consumer: string;
  login: string;
  rotatedAt: string;
  /** Connections established before the rotation, open at `listedAt`. */
  count: number;
  /** Their addresses (the first few, distinct). */
  addresses: string[];
  listedAt: string;
  /** When the rotation's overlap was cut over (the old password dropped); null: not (yet), or no overlap. */
  cutAt: string | null;
  line: string;
}

/** The old-connections reads the status makes (`src/queue/rotation-notes.ts`). */
export interface OldConnectionsReads {
  oldConnections(providers: readonly string[]): Promise<Map<string, Map<string, OldConnections>>>;
}

/** A provider's consumers with connections from before their rotation, for its status. */
export function oldConnectionsOf(found: ReadonlyMap<string, OldConnections> | undefined): {
  count: number;
  consumers: OldConnectionsStatus[];
} {
  const open = [...(found ?? [])].filter(([, old]) => old.count > 0);
  const consumers = open
    .sort(([a, x], [b, y]) => y.count - x.count || (a < b ? -1 : 1))
    .slice(0, OLD_CONNECTIONS_LISTED)
    .map(([key, old]) => ({
      consumer: key,
      login: old.login,
      rotatedAt: new Date(old.at).toISOString(),
      count: old.count,
      addresses: old.addresses,
      listedAt: new Date(old.listedAt).toISOString(),
      cutAt: old.cutAt === undefined ? null : new Date(old.cutAt).toISOString(),
      line: oldConnectionsLine(key, old),
    }));
  return { count: open.length, consumers };
}
