/**
 * Batch calls on an adapter that batches: its own `createMany` / `holdsMany` in chunks of its
 * declared limit (an adapter that does not is called per grant, `workers/call-batch.ts`). Each
 * grant's outcome is its own: a call that fails fails that grant only, and a batch that could not
 * be sent at all fails each of its grants with the same error.
 */
import type { Adapter, BatchForm, CallOptions, Each, Grant, HoldsAnswer } from './adapter.js';

/** The limit of an adapter that batches but declares no form. */
export const DEFAULT_BATCH: BatchForm = { form: 'concurrency', limit: 64 };

export function batchFormOf(adapter: Adapter): BatchForm {
  return adapter.batch ?? DEFAULT_BATCH;
}

async function settled<T>(work: Promise<T>): Promise<Each<T>> {
  try {
    return { ok: true, value: await work };
  } catch (error) {
    return { ok: false, error };
  }
}

/** `many` over chunks of `limit`, chunks one after another; a chunk that throws fails its grants. */
async function inChunks<G, T>(
  grants: readonly G[],
  limit: number,
  many: (chunk: readonly G[]) => Promise<Array<Each<T>>>,
): Promise<Array<Each<T>>> {
  const out: Array<Each<T>> = [];
  for (let i = 0; i < grants.length; i += Math.max(1, limit)) {
    const chunk = grants.slice(i, i + Math.max(1, limit));
    const returned = await settled(many(chunk));
    if (returned.ok && returned.value.length === chunk.length) out.push(...returned.value);
    else {
      const error = returned.ok
        ? new Error(`a batch of ${chunk.length} returned ${returned.value.length} outcomes`)
        : returned.error;
      out.push(...chunk.map((): Each<T> => ({ ok: false, error })));
    }
  }
  return out;
}

/** {@link Adapter.createMany} for each grant, in chunks of the adapter's limit. */
export function createEach<V>(
  adapter: Adapter<V> & Required<Pick<Adapter<V>, 'createMany'>>,
  grants: ReadonlyArray<Grant<V>>,
  options: CallOptions,
): Promise<Array<Each<void>>> {
  return inChunks(grants, batchFormOf(adapter as Adapter).limit, (chunk) => adapter.createMany(chunk, options));
}

/** {@link Adapter.holdsMany} for each grant, in chunks of the adapter's limit. */
export function holdsEach<V>(
  adapter: Adapter<V> & Required<Pick<Adapter<V>, 'holdsMany'>>,
  grants: ReadonlyArray<Grant<V>>,
  options: CallOptions,
): Promise<Array<Each<HoldsAnswer>>> {
  return inChunks(grants, batchFormOf(adapter as Adapter).limit, (chunk) => adapter.holdsMany(chunk, options));
}
