/**
 * The plan's questions to a backend, read-only, as the engine's checks ask them: the light check
 * (`authenticates`: can the login authenticate with its grant secret, the cheapest question the
 * backend has) first, and the deep check (`holds`: everything compared, and why not) for each one
 * the light check did not pass, so the reason said is the backend's own; or the deep check for
 * every one (`--deep`: rules changed by hand are seen, at the backend's cost: `ACL GETUSER` is
 * 0.2 to 1 ms of Redis's CPU each). Deep checks go in the batches the adapter declares
 * (`batch-calls.ts`: Redis one pipeline per node per batch, PostgreSQL one transaction), a few at
 * once, each batch or call with its own deadline. Only the adapter's read-only calls are
 * reachable from here: the type admits no other.
 */
import type { Adapter, Each, Grant, HoldsAnswer } from '../adapters/adapter.js';
import { batchFormOf, holdsEach } from '../adapters/batch-calls.js';
import { HoldfastError } from '../errors/holdfast-error.js';

/** What the plan may call on an adapter: its deep check, and what says how it batches. */
export type AskingAdapter = Pick<Adapter, 'holds' | 'holdsMany' | 'authenticates' | 'batch'>;

/** Light checks in flight at once, per provider (an adapter bounds its own further: Redis 8 per node). */
export const LIGHT_AT_ONCE = 64;

/** Batches (or single calls, where the adapter does not batch) in flight at once, per provider. */
export const BATCHES_AT_ONCE = 4;

/** `work` over `items`, at most `limit` at once, results in order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const at = next++;
      out[at] = await work(items[at]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** `run` with a deadline of `timeoutMs`: its signal aborts then, and the adapter rejects with `DEADLINE_EXCEEDED`. */
async function withDeadline<T>(
  timeoutMs: number,
  run: (options: { signal: AbortSignal; deadline: number }) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    return await run({ signal: controller.signal, deadline: Date.now() + timeoutMs });
  } finally {
    clearTimeout(timer);
  }
}

/** Each grant's deep check, in order; an adapter that cannot be asked answers each with an error. */
export async function deepChecks(
  adapter: AskingAdapter,
  grants: readonly Grant[],
  timeoutMs: number,
): Promise<Array<Each<HoldsAnswer>>> {
  const { holds, holdsMany } = adapter;
  if (!holds) {
    const error = new HoldfastError('BACKEND_ERROR', 'this adapter cannot be asked whether it holds a login');
    return grants.map(() => ({ ok: false, error }));
  }
  if (!holdsMany) {
    return mapBounded(grants, BATCHES_AT_ONCE, async (grant): Promise<Each<HoldsAnswer>> => {
      try {
        return { ok: true, value: await withDeadline(timeoutMs, (options) => holds.call(adapter, grant, options)) };
      } catch (error) {
        return { ok: false, error };
      }
    });
  }
  const limit = Math.max(1, batchFormOf(adapter as Adapter).limit);
  const chunks: Grant[][] = [];
  for (let i = 0; i < grants.length; i += limit) chunks.push(grants.slice(i, i + limit));
  const asking = { holdsMany: holdsMany.bind(adapter), batch: adapter.batch } as Adapter &
    Required<Pick<Adapter, 'holdsMany'>>;
  const answers = await mapBounded(chunks, BATCHES_AT_ONCE, (chunk) =>
    withDeadline(timeoutMs, (options) => holdsEach(asking, chunk, options)),
  );
  return answers.flat();
}

/**
 * Each grant checked as a routine check does: light first, deep for those it did not pass (or
 * for every one with `deep`); in order. An adapter without a light check is asked deeply.
 */
export async function checks(
  adapter: AskingAdapter,
  grants: readonly Grant[],
  timeoutMs: number,
  deep: boolean,
): Promise<Array<Each<HoldsAnswer>>> {
  const { authenticates } = adapter;
  if (deep || !authenticates) return deepChecks(adapter, grants, timeoutMs);
  const passed = await mapBounded(grants, LIGHT_AT_ONCE, (grant) =>
    withDeadline(timeoutMs, (options) => authenticates.call(adapter, grant, options)).catch(() => false),
  );
  const confirming = grants.filter((_, i) => !passed[i]);
  const confirmed = await deepChecks(adapter, confirming, timeoutMs);
  let next = 0;
  return passed.map((light): Each<HoldsAnswer> => (light ? { ok: true, value: { held: true } } : confirmed[next++]!));
}
