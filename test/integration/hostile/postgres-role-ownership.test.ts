/**
 * One PostgreSQL, logins that are not a provider's: a role made by hand before holdfast, a role
 * of another provider, a role an older holdfast marked, and the admin's own. Each is refused
 * and left as it was (its password still works), unless adopted; a removal or a listing never
 * reaches past the provider's own roles.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/adapters/adapter.js';
import {
  PostgresRolesAdapter,
  postgresRoles,
  type PostgresRolesValues,
} from '../../../src/adapters/postgres-roles/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend } from '../../backends/index.js';
import { postgresLogin } from '../../backends/logins.js';
import { postgresAdminOf, roleAsSeen, sql } from './database-admin.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(15_000) });

describe('postgres-roles: a role is changed only by the provider whose mark it carries', () => {
  const b = sharedBackend('postgres');
  const tag = hex(3);
  const [A, B] = [`pa${tag}`, `pb${tag}`];
  const roles: string[] = [];
  const adapters: PostgresRolesAdapter[] = [];

  const connect = (provider: string, adopt = false, admin = postgresAdminOf(b)) => {
    const adapter = new PostgresRolesAdapter(admin, { provider, adopt });
    adapters.push(adapter);
    return adapter;
  };
  const grant = (login = `hfo${tag}_${hex(4)}`, values: unknown = {}): Grant<PostgresRolesValues> => {
    roles.push(login);
    return { login, password: hex(12), values: postgresRoles.valuesSchema.parse(values) };
  };
  const refusal = async (call: Promise<unknown>): Promise<string> => {
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    return (error as Error).message;
  };
  const logsIn = (g: Grant<PostgresRolesValues>) => postgresLogin(b, g.login, g.password);
  const reason = async (adapter: PostgresRolesAdapter, g: Grant<PostgresRolesValues>) => {
    const answer = await adapter.holds(g, within());
    return answer.held ? { reason: 'held', detail: '' } : answer;
  };

  afterAll(async () => {
    for (const adapter of adapters) await adapter.close();
    for (const role of roles) await sql(b, `DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
  });

  it('a role made by hand before holdfast: its apply refused naming it, nothing changed; not held, not listed; its removal leaves it', async () => {
    const g = grant();
    await sql(b, `CREATE ROLE "${g.login}" LOGIN PASSWORD 'made-by-hand-1'`);
    await sql(b, `COMMENT ON ROLE "${g.login}" IS 'the billing app'`);
    const a = connect(A);

    const message = await refusal(a.create(g, within()));
    expect(message).toContain(`role "${g.login}" exists but holdfast did not make it for provider "${A}"`);
    expect(message).toContain(`set adopt: true on provider "${A}"`);
    expect(await postgresLogin(b, g.login, 'made-by-hand-1')).toBe(true);
    expect(await postgresLogin(b, g.login, g.password)).toBe(false);
    expect((await roleAsSeen(b, g.login))?.comment).toBe('the billing app');

    expect(await reason(a, g)).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining('holdfast did not make it') as unknown,
    });
    expect(await a.authenticates(g, within())).toBe(false);
    expect(await a.list(g.login, within())).toEqual([]);
    await a.remove(g.login, within());
    expect(await postgresLogin(b, g.login, 'made-by-hand-1')).toBe(true);
  });

  it("adopt: true takes over a role without a mark: the grant's password and rights, marked as the provider's", async () => {
    const g = grant();
    await sql(b, `CREATE ROLE "${g.login}" LOGIN CREATEDB PASSWORD 'made-by-hand-2'`);
    await connect(A, true).create(g, within());
    expect(await postgresLogin(b, g.login, 'made-by-hand-2')).toBe(false);
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
    expect(await roleAsSeen(b, g.login)).toMatchObject({
      comment: `managed by holdfast (provider ${A})`,
      rolcreatedb: false,
    });
    // the provider's own from now on, adopting or not
    const a = connect(A);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    expect(await a.list(g.login, within())).toEqual([g.login]);
  });

  it("two providers making one new login at the same moment: one wins, the other is refused (at once or at its next try); the winner's password works", async () => {
    const g = grant(`hfrace${tag}_${hex(4)}`);
    const theirs = { ...g, password: hex(12) };
    const [a, bee] = [connect(A), connect(B)];
    const outcomes = await Promise.allSettled([a.create(g, within()), bee.create(theirs, within())]);
    const won = outcomes.findIndex((o) => o.status === 'fulfilled');
    expect(
      outcomes.filter((o) => o.status === 'fulfilled'),
      JSON.stringify(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))),
    ).toHaveLength(1);
    const [winner, loser] = won === 0 ? [g, theirs] : [theirs, g];
    const [winnerAdapter, loserAdapter] = won === 0 ? [a, bee] : [bee, a];
    await refusal(loserAdapter.create(loser, within())); // its retry, if the first try only lost the race
    expect(await reason(winnerAdapter, winner)).toEqual({ reason: 'held', detail: '' }); // marked as the winner's
    expect(await logsIn(winner)).toBe(true);
    expect(await logsIn(loser)).toBe(false);
  });

  it("two providers claiming one login: the second refused naming both, adopting or not; the first's password and role intact; each lists and removes only its own", async () => {
    const g = grant();
    const [a, bee, beeAdopting] = [connect(A), connect(B), connect(B, true)];
    await a.create(g, within());
    const theirs = { ...g, password: hex(12) };

    for (const second of [bee, beeAdopting]) {
      const message = await refusal(second.create(theirs, within()));
      expect(message).toContain(`role "${g.login}" exists but it belongs to provider "${A}"`);
      expect(message).toContain(`not to provider "${B}"`);
    }
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
    expect(await postgresLogin(b, g.login, theirs.password)).toBe(false);
    expect((await roleAsSeen(b, g.login))?.comment).toBe(`managed by holdfast (provider ${A})`);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    expect(await reason(bee, theirs)).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining(`belongs to provider "${A}"`) as unknown,
    });

    expect(await a.list(`hfo${tag}_`, within())).toContain(g.login);
    expect(await bee.list(`hfo${tag}_`, within())).toEqual([]);
    await bee.remove(g.login, within());
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
    await a.remove(g.login, within());
    expect(await roleAsSeen(b, g.login)).toBeUndefined();
  });

  it("a role an older holdfast marked (no provider): not held and not listed until the next apply re-marks it as this provider's; then another provider is refused", async () => {
    const g = grant();
    await sql(b, `CREATE ROLE "${g.login}" LOGIN PASSWORD 'older-holdfast-1'`);
    await sql(b, `COMMENT ON ROLE "${g.login}" IS 'managed by holdfast'`);
    const a = connect(A);
    expect(await a.list(g.login, within())).toEqual([]);
    expect(await reason(a, g)).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining('older holdfast') as unknown,
    });

    await a.create(g, within());
    expect((await roleAsSeen(b, g.login))?.comment).toBe(`managed by holdfast (provider ${A})`);
    expect(await reason(a, g)).toEqual({ reason: 'held', detail: '' });
    expect(await a.list(g.login, within())).toEqual([g.login]);
    await refusal(connect(B).create({ ...g, password: hex(12) }, within()));
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
  });

  it('the role the provider connects as is refused, even when it adopts: the admin still logs in with its own password', async () => {
    const admin = `hfadm${tag}`;
    const password = hex(12);
    roles.push(admin);
    await sql(b, `CREATE ROLE "${admin}" LOGIN SUPERUSER PASSWORD '${password}'`); // an admin of its own: the shared one is never at stake
    const adopting = connect(A, true, postgresAdminOf(b, { username: admin, password }));
    const message = await refusal(
      adopting.create({ login: admin, password: hex(12), values: postgresRoles.valuesSchema.parse({}) }, within()),
    );
    expect(message).toContain(`"${admin}" is the admin role provider "${A}" connects as`);
    expect(await postgresLogin(b, admin, password)).toBe(true);
    expect(await roleAsSeen(b, admin)).toMatchObject({ comment: null, rolsuper: true });
  });
});
