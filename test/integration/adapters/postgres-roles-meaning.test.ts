/**
 * `postgres-roles` on a real PostgreSQL: grants and memberships set by hand in another order and spelling (two
 * privileges granted and one taken back, several objects in one GRANT, one GRANT per object, CONNECT granted a second
 * time by another grantor) are held; one database or group more, a group named unquoted (folded to lower case: another
 * role), or NOINHERIT are not, with what differs in words, and a create restores the grant.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/adapters/adapter.js';
import {
  PostgresRolesAdapter,
  postgresRoles,
  type PostgresRolesValues,
} from '../../../src/adapters/postgres-roles/index.js';
import { sharedBackend } from '../../backends/index.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(10_000) });
const b = sharedBackend('postgres');

/** Runs `statements` in order on one admin session (a `SET ROLE` lasts until the next `RESET ROLE`). */
async function sql(...statements: string[]): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    let rows: pg.QueryResultRow[] = [];
    for (const statement of statements) rows = (await client.query<pg.QueryResultRow>(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

describe('postgres-roles: grants and memberships compared by meaning', () => {
  const tag = hex(3);
  const [dbA, dbB, dbC] = [`hfma_${tag}`, `hfmb_${tag}`, `hfmc_${tag}`];
  const [s1, s2] = [`hfms1_${tag}`, `hfms2_${tag}`];
  /** A group whose name has capitals: quoted, it is `Readers_…`; unquoted, PostgreSQL reads `readers_…`. */
  const Readers = `Readers_${tag}`;
  const readers = `readers_${tag}`;
  const grantor = `hfmgrantor_${tag}`;
  const adapter = new PostgresRolesAdapter(
    { url: `postgres://${b.host}:${b.port}/postgres`, username: b.admin.username, password: b.admin.password },
    { provider: 'test', adopt: false },
  );
  const g: Grant<PostgresRolesValues> = {
    login: `hfm_${hex(4)}`,
    password: hex(12),
    values: postgresRoles.valuesSchema.parse({ databases: [dbA, dbB], schemas: [s1, s2], roles: [Readers] }),
  };
  const role = `"${g.login}"`;
  const aclOf = async (db: string) =>
    (await sql(`SELECT datacl::text AS acl FROM pg_database WHERE datname = '${db}'`))[0]?.['acl'] as string;

  beforeAll(async () => {
    for (const db of [dbA, dbB, dbC]) await sql(`CREATE DATABASE ${db}`);
    await sql(
      `CREATE SCHEMA ${s1}`,
      `CREATE SCHEMA ${s2}`,
      `CREATE ROLE "${Readers}" NOLOGIN`,
      `CREATE ROLE ${readers} NOLOGIN`,
      `CREATE ROLE ${grantor} NOLOGIN`,
      `GRANT CONNECT ON DATABASE ${dbA} TO ${grantor} WITH GRANT OPTION`,
    );
    await adapter.create(g, within());
  });
  afterAll(async () => {
    await sql(`REVOKE CONNECT ON DATABASE ${dbA} FROM ${grantor} CASCADE`).catch(() => undefined);
    await adapter.remove(g.login, within()).catch(() => undefined);
    await adapter.close();
    for (const db of [dbA, dbB, dbC]) await sql(`DROP DATABASE IF EXISTS ${db}`);
    await sql(
      `DROP SCHEMA IF EXISTS ${s1}`,
      `DROP SCHEMA IF EXISTS ${s2}`,
      `DROP ROLE IF EXISTS "${Readers}"`,
      `DROP ROLE IF EXISTS ${readers}`,
      `DROP ROLE IF EXISTS ${grantor}`,
    );
  });

  it('holds the grants set again by hand in another order and spelling', async () => {
    expect(await adapter.holds(g, within())).toEqual({ held: true });
    const before = await aclOf(dbA);
    await sql(
      `REVOKE ALL ON DATABASE ${dbA}, ${dbB} FROM ${role}`,
      `REVOKE ALL ON SCHEMA ${s1}, ${s2} FROM ${role}`,
      `REVOKE "${Readers}" FROM ${role}`,
      `GRANT TEMPORARY, CONNECT ON DATABASE ${dbB}, ${dbA} TO ${role}`,
      `REVOKE TEMPORARY ON DATABASE ${dbA}, ${dbB} FROM ${role}`,
      `GRANT USAGE ON SCHEMA ${s2} TO ${role}`,
      `GRANT USAGE ON SCHEMA ${s1} TO ${role}`,
      `GRANT "${Readers}" TO ${role}`,
      `SET ROLE ${grantor}`,
      `GRANT CONNECT ON DATABASE ${dbA} TO ${role}`,
      'RESET ROLE',
    );
    const after = await aclOf(dbA);
    // the ACL now names the role twice (two grantors): another spelling of the same right
    expect(after.split(`${g.login}=c/`).length - 1).toBe(2);
    expect(after).not.toBe(before);
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });

  it('does not hold CONNECT on one database more, and a create takes it back', async () => {
    await sql(`GRANT CONNECT ON DATABASE ${dbC} TO ${role}`);
    expect(await adapter.holds(g, within())).toEqual({
      held: false,
      reason: 'grants-differ',
      detail: `databases (CONNECT): the backend also has "${dbC}"`,
    });
    await adapter.create(g, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });

  it('does not hold a group granted unquoted, which PostgreSQL folds to another role', async () => {
    await sql(`GRANT ${Readers} TO ${role}`); // unquoted: readers_…, not Readers_…
    expect(await adapter.holds(g, within())).toEqual({
      held: false,
      reason: 'roles-differ',
      detail: `roles: the backend also has "${readers}"`,
    });
    await sql(`REVOKE "${Readers}" FROM ${role}`);
    expect(await adapter.holds(g, within())).toEqual({
      held: false,
      reason: 'roles-differ',
      detail: `roles: the backend also has "${readers}"; it lacks "${Readers}"`,
    });
    await adapter.create(g, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });

  it('holds no VALID UNTIL as infinity; not an expiry to come, which a create removes', async () => {
    await sql(`ALTER ROLE ${role} VALID UNTIL 'infinity'`);
    expect(await adapter.holds(g, within())).toEqual({ held: true });
    await sql(`ALTER ROLE ${role} VALID UNTIL '2999-01-01 00:00:00+00'`);
    expect(await adapter.holds(g, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringMatching(
        /^attributes: the role's password expires at 2999-01-01 .*the grant asks for no expiry$/,
      ) as unknown,
    });
    await adapter.create(g, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });

  it('does not hold a NOINHERIT role, and a create restores INHERIT', async () => {
    await sql(`ALTER ROLE ${role} NOINHERIT`);
    expect(await adapter.holds(g, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('the role has NOINHERIT') as unknown,
    });
    await adapter.create(g, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });
});
