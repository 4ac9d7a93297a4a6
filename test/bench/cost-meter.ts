/**
 * What one unit of work (a routine check, a heal) cost, everything of a window divided by the
 * units done in it: the engine's CPU, the store operations it asked (its own count) and the
 * store's round trips and bytes (`wire.ts`), the commands the queue's Redis and the cache ran
 * (`INFO commandstats`, those run inside Lua scripts included; the benchmark's own `INFO`s left
 * out) and their round trips and bytes. The benchmark's own connections are left out of the
 * wire figures, and commands it sent itself (a lateness sampler's reads) can be given to be
 * left out of the queue's.
 */
import { Redis } from 'ioredis';
import type { BenchEnv } from './bench-env.js';
import type { ChildStats } from './engine-child.js';
import type { EngineProcess } from './engine-process.js';
import { costBetween, redisCost, sumCosts, type RedisCost } from './measure.js';
import { localPort, wireBetween, wireOf, type Wire, type WireSnapshot } from './wire.js';

export interface UnitCost {
  engineCpuMs: number;
  storeOps: number;
  storeRoundTrips: number;
  storeBytes: { in: number; out: number };
  /** Commands the queue's Redis ran (inside its scripts too). */
  queueCalls: number;
  queueRoundTrips: number;
  queueBytes: { in: number; out: number };
  /** Commands the cache ran, summed over its nodes. */
  backendCalls: number;
  backendRoundTrips: number;
  backendBytes: { in: number; out: number };
}

export interface CostSnapshot {
  at: number;
  engines: ChildStats[];
  queue: RedisCost;
  caches: RedisCost[];
  wire: { store: WireSnapshot[]; queue: WireSnapshot[]; cache: WireSnapshot[] };
  /** The local ports of the benchmark's connections open while the wire was read. */
  own: number[];
}

export interface WindowCost {
  seconds: number;
  engineCpuUs: number;
  storeOps: number;
  queue: RedisCost;
  cache: RedisCost;
  wire: { store: Wire; queue: Wire; cache: Wire };
}

/** Commands run, less the benchmark's `INFO`s and `own` others. */
export function callsOf(cost: RedisCost, own = 0): number {
  let calls = 0;
  for (const [name, n] of cost.calls) if (name !== 'info') calls += n;
  return calls - own;
}

const portOf = (url: string) => Number(new URL(url).port);

export class CostMeter {
  /** Commands the benchmark sent the queue's Redis itself (set by the caller before {@link between}). */
  ownQueueCalls = 0;
  /** The same for the cache (a heal's probes). */
  ownCacheCalls = 0;
  /** Local ports of other connections of the benchmark, to leave out of the wire figures. */
  readonly exclude = new Set<number>();

  constructor(
    private readonly env: BenchEnv,
    private readonly engines: readonly EngineProcess[],
    private readonly caches: readonly string[] = [env.cache.url],
  ) {}

  /** Reads everything at once: fresh connections each time (the cache may have restarted since). */
  async snapshot(): Promise<CostSnapshot> {
    const queue = new Redis(this.env.queue.url, { maxRetriesPerRequest: 1 });
    const caches = this.caches.map((url) => new Redis(url, { maxRetriesPerRequest: 1 }));
    try {
      const [engines, queueCost, cacheCosts] = await Promise.all([
        Promise.all(this.engines.map((e) => e.fresh())),
        redisCost(queue),
        Promise.all(caches.map(redisCost)),
      ]);
      const wire = {
        store: wireOf([this.env.store.port]),
        queue: wireOf([this.env.queue.port]),
        cache: wireOf(this.caches.map(portOf)),
      };
      return {
        at: Date.now(),
        engines,
        queue: queueCost,
        caches: cacheCosts,
        wire,
        own: [queue, ...caches].map(localPort),
      };
    } finally {
      for (const client of [queue, ...caches]) client.disconnect();
    }
  }

  between(before: CostSnapshot, after: CostSnapshot): WindowCost {
    const exclude = new Set([...this.exclude, ...after.own]);
    const sum = (pick: (s: ChildStats) => number) =>
      after.engines.reduce((total, s, i) => total + pick(s) - pick(before.engines[i]!), 0);
    return {
      seconds: (after.at - before.at) / 1000,
      engineCpuUs: sum((s) => s.cpuUs),
      storeOps: sum((s) => s.store.reads + s.store.writes),
      queue: costBetween(before.queue, after.queue),
      cache: sumCosts(after.caches.map((c, i) => costBetween(before.caches[i]!, c))),
      wire: {
        store: wireBetween(before.wire.store, after.wire.store, exclude),
        queue: wireBetween(before.wire.queue, after.wire.queue, exclude),
        cache: wireBetween(before.wire.cache, after.wire.cache, exclude),
      },
    };
  }

  perUnit(w: WindowCost, units: number): UnitCost {
    return perUnit(w, units, { queue: this.ownQueueCalls, cache: this.ownCacheCalls });
  }
}

const r = (n: number) => Math.round(n * 1000) / 1000;

/** Everything of the window divided by `units` (at least one). */
export function perUnit(w: WindowCost, units: number, own = { queue: 0, cache: 0 }): UnitCost {
  const u = Math.max(units, 1);
  const bytes = (x: Wire) => ({ in: r(x.bytesIn / u), out: r(x.bytesOut / u) });
  return {
    engineCpuMs: r(w.engineCpuUs / 1000 / u),
    storeOps: r(w.storeOps / u),
    storeRoundTrips: r(w.wire.store.roundTrips / u),
    storeBytes: bytes(w.wire.store),
    queueCalls: r(callsOf(w.queue, own.queue) / u),
    queueRoundTrips: r(w.wire.queue.roundTrips / u),
    queueBytes: bytes(w.wire.queue),
    backendCalls: r(callsOf(w.cache, own.cache) / u),
    backendRoundTrips: r(w.wire.cache.roundTrips / u),
    backendBytes: bytes(w.wire.cache),
  };
}

/** Counts the commands an ioredis client sends (to leave the benchmark's own reads out of the queue's). */
export function countSent(redis: Redis): () => number {
  let sent = 0;
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    return original(...args);
  };
  return () => sent;
}

/** The rows of a table for a unit cost: `label` names the unit ("check", "heal"). */
export function unitRows(label: string, u: UnitCost): Array<[string, string]> {
  return [
    [`engine CPU ms / ${label}`, String(u.engineCpuMs)],
    [`store ops / ${label} (engine's count)`, String(u.storeOps)],
    [`store round trips / ${label}; bytes in / out`, `${u.storeRoundTrips}; ${u.storeBytes.in} / ${u.storeBytes.out}`],
    [`queue Redis commands / ${label} (inside scripts too)`, String(u.queueCalls)],
    [
      `queue Redis round trips / ${label}; bytes in / out`,
      `${u.queueRoundTrips}; ${u.queueBytes.in} / ${u.queueBytes.out}`,
    ],
    [`cache commands / ${label}`, String(u.backendCalls)],
    [
      `cache round trips / ${label}; bytes in / out`,
      `${u.backendRoundTrips}; ${u.backendBytes.in} / ${u.backendBytes.out}`,
    ],
  ];
}
