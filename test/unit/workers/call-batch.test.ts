/**
 * The effects' batches (`workers/call-batch.ts`): calls of one window go to the adapter as one
 * batch, each call keeps its own outcome and deadline, and one login is never twice in a batch.
 */
import { describe, expect, it } from 'vitest';
import type { Adapter, CallOptions, Each, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import { HoldfastError, isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { CallBatch } from '../../../workers/call-batch.js';

const grant = (login: string): Grant => ({ login, password: 'a-password-long-enough', values: {} });
const within = (ms = 5_000): CallOptions => ({ signal: AbortSignal.timeout(ms) });

/** An adapter that batches, recording each batch's logins; `refuse` logins fail alone, `slowMs` delays every batch. */
function batching(refuse: ReadonlySet<string> = new Set(), slowMs = 0): Adapter & { batches: string[][] } {
  const batches: string[][] = [];
  const each = async <T>(grants: ReadonlyArray<Grant>, value: T): Promise<Array<Each<T>>> => {
    batches.push(grants.map((g) => g.login));
    await new Promise((r) => setTimeout(r, slowMs));
    return grants.map((g) =>
      refuse.has(g.login)
        ? { ok: false, error: new HoldfastError('BACKEND_REFUSED', `${g.login} refused`) }
        : { ok: true, value },
    );
  };
  return {
    batches,
    batch: { form: 'pipeline', limit: 100 },
    create: () => Promise.reject(new Error('not batched')),
    remove: () => Promise.resolve(),
    holds: () => Promise.reject(new Error('not batched')),
    createMany: (grants) => each(grants, undefined),
    holdsMany: (grants) => each<HoldsAnswer>(grants, { held: true }),
    close: () => Promise.resolve(),
  };
}

describe('a batch of calls', () => {
  it('sends the calls of one window as one batch, each settled on its own', async () => {
    const adapter = batching(new Set(['b']));
    const batch = new CallBatch(adapter);
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((l) => batch.create(grant(l), within())));
    expect(adapter.batches).toEqual([['a', 'b', 'c']]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await Promise.all(['d', 'e'].map((l) => batch.holds(grant(l), within())))).toEqual([
      { held: true },
      { held: true },
    ]);
  });

  it("lets each of a batch's grants listen to the batch's signal without Node warning of a leak", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const adapter = batching();
      // as an adapter does: each grant waits for a call slot, listening to the batch's signal
      adapter.createMany = (grants, options) => {
        for (const _ of grants) options.signal.addEventListener('abort', () => undefined, { once: true });
        return Promise.resolve(grants.map(() => ({ ok: true as const, value: undefined })));
      };
      const batch = new CallBatch(adapter);
      const logins = Array.from({ length: 20 }, (_, n) => `l${n}`);
      await Promise.all(logins.map((l) => batch.create(grant(l), within())));
      await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('sends one login once per batch: a second call for it goes in the next batch', async () => {
    const adapter = batching();
    const batch = new CallBatch(adapter);
    await Promise.all([
      batch.create(grant('a'), within()),
      batch.create(grant('a'), within()),
      batch.create(grant('b'), within()),
    ]);
    expect(adapter.batches).toEqual([['a', 'b'], ['a']]);
  });

  it('rejects a call at its own deadline while the batch goes on for the others', async () => {
    const adapter = batching(new Set(), 300);
    const batch = new CallBatch(adapter);
    const started = Date.now();
    const [short, long] = await Promise.allSettled([
      batch.create(grant('a'), within(100)),
      batch.create(grant('b'), within(5_000)),
    ]);
    expect(short.status === 'rejected' && isHoldfastError(short.reason, 'DEADLINE_EXCEEDED')).toBe(true);
    expect(long.status).toBe('fulfilled');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('calls an adapter that declares no batch once per grant, at once', async () => {
    const created: string[] = [];
    const plain: Adapter = {
      create: (g) => {
        created.push(g.login);
        return g.login === 'x' ? Promise.reject(new HoldfastError('BACKEND_REFUSED', 'x refused')) : Promise.resolve();
      },
      remove: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const outcomes = await Promise.allSettled(
      ['w', 'x', 'y'].map((l) => new CallBatch(plain).create(grant(l), within())),
    );
    expect(created.sort()).toEqual(['w', 'x', 'y']);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it("gives an adapter that declares no batch each caller's own signal, so that a call past its deadline is aborted on the backend", async () => {
    const seen: AbortSignal[] = [];
    const plain: Adapter = {
      create: (_g, options) => (seen.push(options.signal), Promise.resolve()),
      remove: () => Promise.resolve(),
      holds: (_g, options) => (seen.push(options.signal), Promise.resolve({ held: true })),
      close: () => Promise.resolve(),
    };
    const calls = new CallBatch(plain);
    const own = [within(), within(), within()];
    await Promise.all([
      calls.create(grant('v'), own[0]!),
      calls.create(grant('w'), own[1]!),
      calls.holds(grant('x'), own[2]!),
    ]);
    expect(seen).toEqual(own.map((o) => o.signal));
  });

  it('aborts a batch whose calls share one signal (the calls of one turn) when that signal aborts', async () => {
    let sent: AbortSignal | undefined;
    let started!: () => void;
    const begun = new Promise<void>((resolve) => (started = resolve));
    const adapter: Adapter = {
      ...batching(),
      createMany: (grants, options) => {
        sent = options.signal;
        started();
        return new Promise((resolve) => options.signal.addEventListener('abort', () => resolve([]), { once: true }));
      },
    };
    const turn = new AbortController();
    const shared: CallOptions = { signal: turn.signal, deadline: Date.now() + 5_000 };
    const calls = new CallBatch(adapter);
    const outcomes = Promise.allSettled(['a', 'b', 'c'].map((l) => calls.create(grant(l), shared)));
    await begun;
    turn.abort();
    expect(sent?.aborted).toBe(true);
    const settled = await outcomes;
    expect(settled.every((o) => o.status === 'rejected' && isHoldfastError(o.reason, 'DEADLINE_EXCEEDED'))).toBe(true);
  });
});
