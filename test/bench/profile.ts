/**
 * A benchmark's view inside an engine child (started with `profile`, see `engine-process.ts`): calls and time of the
 * store, the adapters and the queue's Redis coordination, counted by wrapping the engine's own
 * objects, and the store's round trips by wrapping its records collection. Nothing of it runs
 * outside the benchmark.
 */
import type { Engine } from '../../src/engine/engine.js';

/** Calls, milliseconds spent (summed over concurrent calls) and the most in flight at once. */
export interface CallStats {
  calls: number;
  ms: number;
  maxInFlight: number;
}

export type Profile = Record<string, CallStats>;

const stats: Profile = {};
const inFlight = new Map<string, number>();

function noteStart(name: string): () => void {
  const entry = (stats[name] ??= { calls: 0, ms: 0, maxInFlight: 0 });
  const now = (inFlight.get(name) ?? 0) + 1;
  inFlight.set(name, now);
  entry.maxInFlight = Math.max(entry.maxInFlight, now);
  const started = performance.now();
  return () => {
    entry.calls++;
    entry.ms += performance.now() - started;
    inFlight.set(name, (inFlight.get(name) ?? 1) - 1);
  };
}

/** Wraps each named async method of `target` (an instance) in a count and a timer. */
function wrap(target: object, prefix: string, methods: readonly string[]): void {
  const object = target as Record<string, unknown>;
  for (const method of methods) {
    const original = object[method];
    if (typeof original !== 'function') continue;
    object[method] = function (this: unknown, ...args: unknown[]) {
      const done = noteStart(`${prefix}.${method}`);
      try {
        const result = (original as (...a: unknown[]) => unknown).apply(this, args);
        if (result instanceof Promise) return result.finally(done);
        done();
        return result;
      } catch (error) {
        done();
        throw error;
      }
    };
  }
}

/** Every function of an object, its own or its class's (not the constructor). */
function methodsOf(target: object): string[] {
  const proto = Object.getPrototypeOf(target) as object;
  const names = [
    ...Object.getOwnPropertyNames(target),
    ...(proto === Object.prototype ? [] : Object.getOwnPropertyNames(proto)),
  ];
  return names.filter(
    (name) => name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function',
  );
}

export function profileEngine(engine: Engine): void {
  wrap(engine.store, 'store', ['get', 'insert', 'insertMany', 'save', 'delete']);
  // each part of coordination's calls, under `redis` as before (its parts' method names do not overlap)
  const { locks, signals, notes, contests } = engine.coordination;
  for (const part of [locks, signals, notes, contests]) wrap(part, 'redis', methodsOf(part));
  wrap(engine.queue, 'queue', methodsOf(engine.queue));
  if (engine.worker) wrap(engine.worker, 'worker', ['process']);
  for (const provider of engine.providers.values())
    wrap(provider.adapter, 'adapter', ['create', 'createMany', 'holds', 'holdsMany', 'authenticates', 'remove']);
  // the store's round trips: each call of the records collection is one
  const records = (engine.store as unknown as { records: object }).records;
  wrap(records, 'mongo', ['findOne', 'insertOne', 'insertMany', 'updateOne', 'bulkWrite', 'deleteOne']);
}

export function profileNow(): Profile {
  return structuredClone(stats);
}

/** What happened between two profiles. */
export function profileBetween(before: Profile, after: Profile): Profile {
  const out: Profile = {};
  for (const [name, a] of Object.entries(after)) {
    const b = before[name] ?? { calls: 0, ms: 0, maxInFlight: 0 };
    if (a.calls - b.calls > 0) out[name] = { calls: a.calls - b.calls, ms: a.ms - b.ms, maxInFlight: a.maxInFlight };
  }
  return out;
}
