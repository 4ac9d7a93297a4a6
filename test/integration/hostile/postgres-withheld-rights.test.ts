/**
 * The rights a consumer's PostgreSQL role never has (SUPERUSER, CREATEDB, CREATEROLE,
 * REPLICATION, BYPASSRLS), checked deep: given by hand, the role is not held and the next
 * apply takes them back; reachable through a group (SET ROLE), the apply is refused. The same for
 * the powerful predefined roles (pg_execute_server_program, pg_write_all_data…) and the
 * operator's withheldRoles, reached through any group.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
const PLAIN = { rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolreplication: false, rolbypassrls: false };

describe("postgres-roles: rights a consumer's role never has", () => {
  const b = sharedBackend('postgres');
  const tag = hex(3);
  const roles: string[] = [];
  let adapter: PostgresRolesAdapter;

  beforeAll(() => {
    adapter = new PostgresRolesAdapter(postgresAdminOf(b), { provider: `rights${tag}`, adopt: false });
  });
  afterAll(async () => {
    await adapter.close();
    for (const role of roles.reverse()) await sql(b, `DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
  });

  const grant = (values: unknown = {}): Grant<PostgresRolesValues> => {
    const login = `hfr${tag}_${hex(4)}`;
    roles.push(login);
    return { login, password: hex(12), values: postgresRoles.valuesSchema.parse(values) };
  };
  const group = async (attributes: string) => {
    const name = `hfgrp${tag}_${hex(3)}`;
    roles.push(name);
    await sql(b, `CREATE ROLE "${name}" NOLOGIN ${attributes}`);
    return name;
  };
  const answer = async (g: Grant<PostgresRolesValues>) => {
    const a = await adapter.holds(g, within());
    return a.held ? { reason: 'held', detail: '' } : a;
  };

  it('a role ALTERed by hand to SUPERUSER CREATEROLE CREATEDB REPLICATION BYPASSRLS is not held, naming them, and the next apply takes them back', async () => {
    const g = grant();
    await adapter.create(g, within());
    expect(await answer(g)).toEqual({ reason: 'held', detail: '' });

    for (const attributes of ['SUPERUSER CREATEROLE CREATEDB REPLICATION BYPASSRLS', 'CREATEROLE', 'SUPERUSER']) {
      await sql(b, `ALTER ROLE "${g.login}" ${attributes}`);
      const a = await answer(g);
      expect(a.reason, attributes).toBe('rules-differ');
      for (const word of attributes.split(' ')) expect(a.detail).toContain(word);
      expect(await postgresLogin(b, g.login, g.password)).toBe(true); // the light check alone would not see it

      await adapter.create(g, within());
      expect(await roleAsSeen(b, g.login), `after ${attributes}`).toMatchObject(PLAIN);
      expect(await answer(g)).toEqual({ reason: 'held', detail: '' });
    }
  });

  it('a group the values name that has SUPERUSER: the apply is refused naming it, and nothing is made', async () => {
    const superGroup = await group('SUPERUSER');
    const g = grant({ roles: [superGroup] });
    const error = await adapter.create(g, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    expect((error as Error).message).toContain(
      `would be a member of ${superGroup} (SUPERUSER), and could SET ROLE to it`,
    );
    expect(await roleAsSeen(b, g.login)).toBeUndefined(); // the transaction was rolled back
  });

  it('a group that gains CREATEROLE through another after the apply: not held, naming it, and the next apply refused', async () => {
    const [plain, top] = [await group(''), await group('')];
    const g = grant({ roles: [plain] });
    await adapter.create(g, within());
    expect(await answer(g)).toEqual({ reason: 'held', detail: '' });

    await sql(b, `GRANT "${top}" TO "${plain}"`);
    await sql(b, `ALTER ROLE "${top}" CREATEROLE`);
    const a = await answer(g);
    expect(a).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining(`SET ROLE to ${top} (CREATEROLE)`) as unknown,
    });
    const error = await adapter.create(g, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    expect((error as Error).message).toContain(`${top} (CREATEROLE)`);
  });

  it('a group holding pg_write_all_data (through another group): the apply is refused naming it, and nothing is made', async () => {
    const [outer, inner] = [await group(''), await group('')];
    await sql(b, `GRANT pg_write_all_data TO "${inner}"`);
    await sql(b, `GRANT "${inner}" TO "${outer}"`);
    const g = grant({ roles: [outer] });
    const error = await adapter.create(g, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    expect((error as Error).message).toContain('would be a member of pg_write_all_data (withheld role)');
    expect(await roleAsSeen(b, g.login)).toBeUndefined(); // the transaction was rolled back
  });

  it('a group that gains pg_execute_server_program after the consumer is held: not held (rules-differ) naming it and the next apply refused', async () => {
    const plain = await group('');
    const g = grant({ roles: [plain] });
    await adapter.create(g, within());
    expect(await answer(g)).toEqual({ reason: 'held', detail: '' });

    await sql(b, `GRANT pg_execute_server_program TO "${plain}"`);
    const a = await answer(g);
    expect(a).toMatchObject({
      reason: 'rules-differ',
      detail: expect.stringContaining('SET ROLE to pg_execute_server_program (withheld role)') as unknown,
    });
    expect(await postgresLogin(b, g.login, g.password)).toBe(true); // the light check alone would not see it
    const error = await adapter.create(g, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
    expect((error as Error).message).toContain('pg_execute_server_program (withheld role)');
  });

  it('a role the operator withholds (withheldRoles), gained by a group later: not held, and the apply refused', async () => {
    const [plain, auditors] = [await group(''), await group('')];
    const policy = postgresRoles.policySchema.parse({ allowedRoles: [plain], withheldRoles: [auditors] });
    const own = postgresRoles.connect(postgresAdminOf(b), { provider: `rights${tag}`, adopt: false }, policy);
    try {
      const g = grant({ roles: [plain] });
      await own.create(g, within());
      expect(await own.holds!(g, within())).toEqual({ held: true });
      await sql(b, `GRANT "${auditors}" TO "${plain}"`);
      expect(await own.holds!(g, within())).toMatchObject({
        reason: 'rules-differ',
        detail: expect.stringContaining(`${auditors} (withheld role)`) as unknown,
      });
      const error = await own.create(g, within()).catch((e: unknown) => e);
      expect(isHoldfastError(error, 'BACKEND_REFUSED'), String(error)).toBe(true);
      // the provider without it: held as before
      expect(await adapter.holds(g, within())).toEqual({ held: true });
    } finally {
      await own.close();
    }
  });
});
