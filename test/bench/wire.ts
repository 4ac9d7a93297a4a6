/**
 * What went over the wire to a server, read off the kernel's TCP counters of the server's own
 * sockets (`ss -ti`): bytes in and out, and the data segments it received, each a write of a
 * client (a round trip; a pipeline of several commands sent at once is one). The same for a
 * Redis and for the store (FerretDB gives no such count of its own). Sockets named in `exclude`
 * (the benchmark's own connections, by their local port) are left out; a socket opened during
 * a window counts from zero, one closed during it is lost.
 */
import { execFileSync } from 'node:child_process';

export interface Wire {
  bytesIn: number;
  bytesOut: number;
  roundTrips: number;
}

/** Each established socket of the server listening on `port`, by its peer's port. */
export type WireSnapshot = Map<number, Wire>;

const field = (text: string, name: string) => Number(new RegExp(`\\b${name}:(\\d+)`).exec(text)?.[1] ?? 0);

export function wireNow(port: number): WireSnapshot {
  const out = execFileSync('ss', ['-tinH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const sockets: WireSnapshot = new Map();
  // each socket is a line of addresses followed by an indented line of counters
  const lines = out.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const peer = /^\S.*\s\S+:\d+\s+\S+:(\d+)\s*$/.exec(lines[i]!);
    if (!peer) continue;
    const info = lines[++i]!;
    sockets.set(Number(peer[1]), {
      bytesIn: field(info, 'bytes_received'),
      bytesOut: field(info, 'bytes_acked'),
      roundTrips: field(info, 'data_segs_in'),
    });
  }
  return sockets;
}

/** The servers' snapshots (several for a backend of several nodes) at once. */
export function wireOf(ports: readonly number[]): WireSnapshot[] {
  return ports.map(wireNow);
}

/**
 * Summed over the sockets of every server, less those of the benchmark's own connections (`exclude`: their local
 * ports).
 */
export function wireBetween(
  before: readonly WireSnapshot[],
  after: readonly WireSnapshot[],
  exclude: ReadonlySet<number> = new Set(),
): Wire {
  const total: Wire = { bytesIn: 0, bytesOut: 0, roundTrips: 0 };
  after.forEach((sockets, i) => {
    for (const [peer, a] of sockets) {
      if (exclude.has(peer)) continue;
      const b = before[i]?.get(peer) ?? { bytesIn: 0, bytesOut: 0, roundTrips: 0 };
      total.bytesIn += a.bytesIn - b.bytesIn;
      total.bytesOut += a.bytesOut - b.bytesOut;
      total.roundTrips += a.roundTrips - b.roundTrips;
    }
  });
  return total;
}

/** The local port of an ioredis connection (to leave the benchmark's own out), once connected. */
export function localPort(redis: { stream?: { localPort?: number } }): number {
  return redis.stream?.localPort ?? -1;
}
