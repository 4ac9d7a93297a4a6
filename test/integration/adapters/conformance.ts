/**
 * The conformance suite every adapter passes against a real backend: create, rotate,
 * remove, holds, deadlines, a backend that cannot be reached, and no password in any error.
 *
 * An adapter's test file calls {@link describeAdapterConformance} with hooks that know how
 * to reach its backend; the suite knows nothing else about it.
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter, CallOptions, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import { isHoldfastError, type ErrorCode } from '../../../src/errors/holdfast-error.js';

export interface ConformanceHooks<Values> {
  /** An adapter with admin rights on a reachable backend. The suite closes it. */
  connect(): Adapter<Values>;
  /** An adapter for an address where nothing listens. The suite closes it. */
  connectUnreachable(): Adapter<Values>;
  /** Ordinary values for `login`; the backend must accept them. */
  grant(login: string, password: string): Grant<Values>;
  /** Whether `login` can authenticate with `password` on the backend now (false when refused). */
  canLogin(login: string, password: string): Promise<boolean>;
  /** A grant the backend refuses, whose refusal would echo its password unless scrubbed. */
  refusedGrant?(login: string): Grant<Values>;
  /** Takes the backend down (connections refused) and brings it back, data kept or not. */
  stopBackend?: () => Promise<void>;
  startBackend?: () => Promise<void>;
}

const signal = (ms = 10_000): CallOptions => ({ signal: AbortSignal.timeout(ms) });
const aborted = (): CallOptions => ({ signal: AbortSignal.abort() });
const password = () => randomBytes(12).toString('hex');

/** Every backend accepts lowercase letters, digits and underscores in a login. */
const login = () => `hfc_${randomBytes(5).toString('hex')}`;

export function describeAdapterConformance<Values>(name: string, setup: () => Promise<ConformanceHooks<Values>>): void {
  describe(`${name} conformance`, () => {
    let hooks: ConformanceHooks<Values>;
    let adapter: Adapter<Values>;
    const made = new Set<string>();
    /** Every password the suite used: no error may carry one. */
    const passwords = new Set<string>();

    const fresh = (pw = password()): Grant<Values> => {
      const l = login();
      made.add(l);
      passwords.add(pw);
      return hooks.grant(l, pw);
    };
    const withPassword = (grant: Grant<Values>, pw: string): Grant<Values> => {
      passwords.add(pw);
      return { ...grant, password: pw };
    };

    /** The adapter's answer, or `held` for an adapter that cannot be asked. */
    const holds = async (grant: Grant<Values>, options = signal()): Promise<HoldsAnswer> =>
      adapter.holds ? adapter.holds(grant, options) : { held: true };
    const reason = async (grant: Grant<Values>) => {
      const answer = await holds(grant);
      return answer.held ? 'held' : answer.reason;
    };

    /** Expects `call` to reject with a HoldfastError of `code` that names no password. */
    const rejects = async (call: Promise<unknown>, code: ErrorCode): Promise<void> => {
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `expected a rejection with ${code}`).toBeDefined();
      expect(isHoldfastError(error) ? error.code : error).toBe(code);
      const text = inspect(error, { depth: 5 }); // message, stack, cause and own properties
      for (const pw of passwords) expect(text).not.toContain(pw);
    };

    beforeAll(async () => {
      hooks = await setup();
      adapter = hooks.connect();
    });

    afterAll(async () => {
      if (!adapter) return;
      for (const l of made) await adapter.remove(l, signal()).catch(() => undefined);
      await adapter.close();
    });

    it('creates a login that authenticates with its password and is held', async () => {
      const grant = fresh();
      await adapter.create(grant, signal());
      expect(await hooks.canLogin(grant.login, grant.password)).toBe(true);
      expect(await hooks.canLogin(grant.login, `${grant.password}x`)).toBe(false);
      expect(await holds(grant)).toEqual({ held: true });
    });

    it('creates idempotently', async () => {
      const grant = fresh();
      await adapter.create(grant, signal());
      await adapter.create(grant, signal());
      expect(await hooks.canLogin(grant.login, grant.password)).toBe(true);
      expect(await holds(grant)).toEqual({ held: true });
    });

    it('rotates the password on create: the old one is refused, the new one held', async () => {
      const old = fresh();
      await adapter.create(old, signal());
      const rotated = withPassword(old, password());
      await adapter.create(rotated, signal());
      expect(await hooks.canLogin(old.login, old.password)).toBe(false);
      expect(await hooks.canLogin(old.login, rotated.password)).toBe(true);
      expect(await holds(rotated)).toEqual({ held: true });
      if (adapter.holds) expect(await reason(old)).toBe('password-differs');
    });

    it('light check: authenticates a held login, and not a wrong password, a missing login or a removed one', async (context) => {
      const light = adapter.authenticates?.bind(adapter);
      if (!light) return context.skip();
      const grant = fresh();
      expect(await light(grant, signal())).toBe(false); // not created yet
      await adapter.create(grant, signal());
      expect(await light(grant, signal())).toBe(true);
      expect(await light(withPassword(grant, password()), signal())).toBe(false);
      await adapter.remove(grant.login, signal());
      // a light check may throw as well as say false: neither proves anything, a deep check follows
      expect(await light(grant, signal()).catch(() => false)).toBe(false);
      // and answers again after the login it last authenticated as was removed
      const other = fresh();
      await adapter.create(other, signal());
      expect(await light(other, signal())).toBe(true);
    });

    it('light check: many at once each get their own answer', async (context) => {
      const light = adapter.authenticates?.bind(adapter);
      if (!light) return context.skip();
      const grants = Array.from({ length: 40 }, () => fresh());
      await Promise.all(grants.slice(0, 20).map((g) => adapter.create(g, signal())));
      const answers = await Promise.all(grants.map((g) => light(g, signal())));
      expect(answers).toEqual(grants.map((_, i) => i < 20));
    });

    it('answers a ping as its administrator', async (context) => {
      if (!adapter.ping) return context.skip();
      await expect(adapter.ping(signal())).resolves.toBeUndefined();
    });

    it('says missing for a login that was never created', async () => {
      if (adapter.holds) expect(await reason(fresh())).toBe('missing');
    });

    it('removes a login: it cannot log in and is missing', async () => {
      const grant = fresh();
      await adapter.create(grant, signal());
      await adapter.remove(grant.login, signal());
      expect(await hooks.canLogin(grant.login, grant.password)).toBe(false);
      if (adapter.holds) expect(await reason(grant)).toBe('missing');
    });

    it('removes a login that is absent', async () => {
      await expect(adapter.remove(login(), signal())).resolves.toBeUndefined();
    });

    it('lists the logins it made under a prefix', async (context) => {
      if (!adapter.list) return context.skip();
      const grant = fresh();
      await adapter.create(grant, signal());
      expect(await adapter.list(grant.login, signal())).toEqual([grant.login]);
      await adapter.remove(grant.login, signal());
      expect(await adapter.list(grant.login, signal())).toEqual([]);
    });

    it('rejects every call with DEADLINE_EXCEEDED when the signal is already aborted', async () => {
      const grant = fresh();
      await rejects(adapter.create(grant, aborted()), 'DEADLINE_EXCEEDED');
      await rejects(adapter.remove(grant.login, aborted()), 'DEADLINE_EXCEEDED');
      if (adapter.holds) await rejects(adapter.holds(grant, aborted()), 'DEADLINE_EXCEEDED');
      if (adapter.authenticates) await rejects(adapter.authenticates(grant, aborted()), 'DEADLINE_EXCEEDED');
      if (adapter.list) await rejects(adapter.list('hfc_', aborted()), 'DEADLINE_EXCEEDED');
      if (adapter.holds) expect(await reason(grant)).toBe('missing'); // nothing was applied
    });

    it('cannot ask a backend that is not there: BACKEND_UNAVAILABLE, promptly, never "not held"', async () => {
      const down = hooks.connectUnreachable();
      try {
        const grant = fresh();
        const started = Date.now();
        if (down.holds) await rejects(down.holds(grant, signal()), 'BACKEND_UNAVAILABLE');
        if (down.authenticates) await rejects(down.authenticates(grant, signal()), 'BACKEND_UNAVAILABLE');
        await rejects(down.create(grant, signal()), 'BACKEND_UNAVAILABLE');
        await rejects(down.remove(grant.login, signal()), 'BACKEND_UNAVAILABLE');
        if (down.ping) await rejects(down.ping(signal()), 'BACKEND_UNAVAILABLE');
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await down.close();
      }
    });

    it('names no password when the backend refuses a grant', async (context) => {
      if (!hooks.refusedGrant) return context.skip();
      const grant = hooks.refusedGrant(login());
      made.add(grant.login);
      passwords.add(grant.password);
      await rejects(adapter.create(grant, signal()), 'BACKEND_ERROR');
    });

    it('cannot ask while its backend is down, and answers again once it is back', async (context) => {
      const { stopBackend, startBackend } = hooks;
      if (!stopBackend || !startBackend) return context.skip();
      const grant = fresh();
      await adapter.create(grant, signal());
      await stopBackend();
      try {
        if (adapter.holds) await rejects(adapter.holds(grant, signal()), 'BACKEND_UNAVAILABLE');
        await rejects(adapter.create(grant, signal()), 'BACKEND_UNAVAILABLE');
      } finally {
        await startBackend();
      }
      await expect
        .poll(
          async () => {
            await adapter.create(grant, signal(1_000));
            return reason(grant);
          },
          { timeout: 15_000, interval: 250 },
        )
        .toBe('held');
      expect(await hooks.canLogin(grant.login, grant.password)).toBe(true);
    });
  });
}
