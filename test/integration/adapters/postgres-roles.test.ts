/**
 * The `postgres-roles` adapter against a real PostgreSQL: the conformance suite, then what
 * only PostgreSQL has: a verifier instead of the password, grants, names it would truncate,
 * a role that still owns objects, roles it did not make, changes made by hand.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import {
  PostgresRolesAdapter,
  postgresRoles,
  type PostgresRolesValues,
} from '../../../src/adapters/postgres-roles/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { ownBackend, sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { postgresLogin } from '../../backends/logins.js';
import { freePort } from '../../backends/ports.js';
import { describeAdapterConformance } from './conformance.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });

export function adminOf(b: BackendEndpoint, more: Partial<AdminConnection> = {}): AdminConnection {
  return {
    url: `postgres://${b.host}:${b.port}/postgres`,
    username: b.admin.username,
    password: b.admin.password,
    ...more,
  };
}

function grantFor(login: string, password: string, values: unknown = {}): Grant<PostgresRolesValues> {
  return { login, password, values: postgresRoles.valuesSchema.parse(values) };
}

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  b: BackendEndpoint,
  text: string,
  params: unknown[] = [],
  database = 'postgres',
): Promise<T[]> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database,
  });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

describeAdapterConformance('postgres-roles', async () => {
  const b = await ownBackend('postgres');
  const nowhere = await freePort();
  return {
    connect: () => postgresRoles.connect(adminOf(b), { provider: 'test', adopt: false }),
    connectUnreachable: () =>
      postgresRoles.connect(
        { url: `postgres://127.0.0.1:${nowhere}/postgres`, username: 'postgres', password: hex(12) },
        { provider: 'test', adopt: false },
      ),
    grant: (login, password) => grantFor(login, password),
    canLogin: (login, password) => postgresLogin(b, login, password),
    // a group role that does not exist: the server refuses the grant (its password is never sent)
    refusedGrant: (login) => grantFor(login, `hfbogus${hex(6)}`, { roles: [`nosuchgroup_${hex(4)}`] }),
    stopBackend: () => b.down(),
    startBackend: () => b.up(),
  };
});

describe('postgres-roles: what only PostgreSQL has', () => {
  const b = sharedBackend('postgres');
  let adapter: PostgresRolesAdapter;
  const tag = hex(3);
  const group = `hfg_${tag}`;
  const db = `hfdb_${tag}`;
  const schema = `hfs_${tag}`;
  const logins: string[] = [];

  beforeAll(async () => {
    adapter = new PostgresRolesAdapter(adminOf(b), { provider: 'test', adopt: false });
    await sql(b, `CREATE ROLE ${group} NOLOGIN`);
    await sql(b, `CREATE DATABASE ${db}`);
    await sql(b, `CREATE SCHEMA ${schema}`);
  });
  afterAll(async () => {
    for (const l of logins) await adapter.remove(l, within()).catch(() => undefined);
    await adapter.close();
    await sql(b, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql(b, `DROP DATABASE IF EXISTS ${db}`);
    await sql(b, `DROP ROLE IF EXISTS ${group}`);
  });

  const fresh = (values: unknown = {}, login = `hfp_${hex(5)}`) => {
    logins.push(login);
    return grantFor(login, hex(12), values);
  };
  const answer = async (g: Grant<PostgresRolesValues>) => {
    const a = await adapter.holds(g, within());
    return a.held ? { reason: 'held', detail: '' } : a;
  };

  it('keeps a SCRAM-SHA-256 verifier computed locally, which the server accepts', async () => {
    const g = fresh();
    await adapter.create(g, within());
    const [row] = await sql<{ rolpassword: string }>(b, 'SELECT rolpassword FROM pg_authid WHERE rolname = $1', [
      g.login,
    ]);
    expect(row?.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
  });

  it('grants CONNECT, USAGE and membership from the values, and takes back what is no longer asked', async () => {
    const g = fresh({ databases: [db], schemas: [schema], roles: [group] });
    await adapter.create(g, within());
    expect(await answer(g)).toEqual({ reason: 'held', detail: '' });
    const [p] = await sql<{ c: boolean; u: boolean; m: boolean }>(
      b,
      `SELECT has_database_privilege($1, $2, 'CONNECT') AS c, has_schema_privilege($1, $3, 'USAGE') AS u, pg_has_role($1, $4, 'MEMBER') AS m`,
      [g.login, db, schema, group],
    );
    expect(p).toEqual({ c: true, u: true, m: true });
    const fewer = { ...g, values: postgresRoles.valuesSchema.parse({ databases: [db] }) };
    expect((await answer(fewer)).reason).toBe('roles-differ');
    await adapter.create(fewer, within());
    const [q] = await sql<{ u: boolean; m: boolean }>(
      b,
      `SELECT has_schema_privilege($1, $2, 'USAGE') AS u, pg_has_role($1, $3, 'MEMBER') AS m`,
      [g.login, schema, group],
    );
    expect(q).toEqual({ u: false, m: false });
    expect(await answer(fewer)).toEqual({ reason: 'held', detail: '' });
  });

  it('applies many roles at once, each on its own connection, granting CONNECT and USAGE on the same database and schema: none fails', async () => {
    // two transactions granting on one database both update its pg_database row: without holdfast's own lock,
    // PostgreSQL fails one with "tuple concurrently updated" (XX000)
    const many = Array.from({ length: 24 }, () => fresh({ databases: [db], schemas: [schema] }));
    const wide = new PostgresRolesAdapter(adminOf(b, { maxConcurrentCalls: 24 }), { provider: 'test', adopt: false });
    try {
      for (let round = 0; round < 3; round++) {
        const outcomes = await Promise.allSettled(
          many.map((g) =>
            wide.create(round === 1 ? { ...g, values: postgresRoles.valuesSchema.parse({}) } : g, within(20_000)),
          ),
        );
        expect(
          outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : [])),
          `round ${round}`,
        ).toEqual([]);
      }
    } finally {
      await wide.close();
    }
  });

  it('says what was changed by hand: password, NOLOGIN, expiry, SUPERUSER, membership, grants', async () => {
    const g = fresh({ databases: [db], roles: [group] });
    await adapter.create(g, within());
    const cases: Array<[string, string, string]> = [
      [`ALTER ROLE "${g.login}" PASSWORD 'changed-by-hand'`, 'password-differs', 'SCRAM verifier'],
      [`ALTER ROLE "${g.login}" NOLOGIN`, 'disabled', 'NOLOGIN'],
      [`ALTER ROLE "${g.login}" VALID UNTIL '2001-01-01'`, 'disabled', 'expired'],
      [`ALTER ROLE "${g.login}" SUPERUSER`, 'rules-differ', 'SUPERUSER'],
      [`REVOKE ${group} FROM "${g.login}"`, 'roles-differ', `"${group}"`],
      [`REVOKE CONNECT ON DATABASE ${db} FROM "${g.login}"`, 'grants-differ', 'CONNECT'],
    ];
    for (const [statement, reason, words] of cases) {
      await sql(b, statement);
      const a = await answer(g);
      expect(a.reason, statement).toBe(reason);
      expect(a.detail).toContain(words);
      expect(a.detail).not.toContain(g.password);
      await adapter.create(g, within());
      expect(await answer(g), `healed after ${statement}`).toEqual({ reason: 'held', detail: '' });
    }
  });

  it('compares by logging in where the admin may not read pg_authid', async () => {
    const limited = `hfadmin_${hex(4)}`;
    const pw = hex(12);
    await sql(b, `CREATE ROLE ${limited} LOGIN CREATEROLE PASSWORD '${pw}'`);
    const weak = new PostgresRolesAdapter(
      { url: `postgres://${b.host}:${b.port}/postgres`, username: limited, password: pw },
      { provider: 'test', adopt: false },
    );
    try {
      const g = fresh();
      await adapter.create(g, within());
      expect(await weak.holds(g, within())).toEqual({ held: true });
      expect(await weak.authenticates(g, within())).toBe(true);
      const wrong = { ...g, password: hex(12) };
      expect((await weak.holds(wrong, within())).held).toBe(false);
      expect(await weak.authenticates(wrong, within())).toBe(false);
    } finally {
      await weak.close();
      await sql(b, `DROP ROLE ${limited}`);
    }
  });

  it('refuses, before sending anything, a name PostgreSQL would truncate or a login with quotes, spaces or ;', async () => {
    for (const login of ['x'.repeat(64), 'a"b', 'a b', 'a;drop role postgres', "it's"]) {
      const g = grantFor(login, hex(12));
      const error = await adapter.create(g, within()).catch((e: unknown) => e);
      expect(isHoldfastError(error, 'BACKEND_REFUSED'), login).toBe(true);
      expect(
        postgresRoles.violations({ id: 'x', login, values: g.values }, postgresRoles.policySchema.parse({}))[0],
      ).toMatch(/^login: /);
    }
    const [count] = await sql<{ n: string }>(
      b,
      "SELECT count(*) AS n FROM pg_roles WHERE rolname LIKE 'xxxxxxxx%' OR rolname LIKE 'a%b' OR rolname LIKE 'it%'",
    );
    expect(count?.n).toBe('0');
  });

  it('does not touch a role it did not make: its apply refused, its removal a no-op', async () => {
    const theirs = `hfother_${hex(4)}`;
    await sql(b, `CREATE ROLE ${theirs} LOGIN PASSWORD 'theirs-1234'`);
    try {
      const g = grantFor(theirs, hex(12));
      expect(isHoldfastError(await adapter.create(g, within()).catch((e: unknown) => e), 'BACKEND_REFUSED')).toBe(true);
      await adapter.remove(theirs, within()); // never this provider's: nothing of its own to remove
      expect(await postgresLogin(b, theirs, 'theirs-1234')).toBe(true);
      expect((await answer(g)).reason).toBe('rules-differ');
    } finally {
      await sql(b, `DROP ROLE ${theirs}`);
    }
  });

  it('applies a batch of roles in one transaction, each in its own savepoint: a role it did not make and a group that does not exist fail alone', async () => {
    const theirs = `hfother_${hex(4)}`;
    await sql(b, `CREATE ROLE ${theirs} LOGIN PASSWORD 'theirs-1234'`);
    try {
      const ours = Array.from({ length: 8 }, () => fresh({ roles: [group] }));
      const bogus = fresh({ roles: [`nosuchgroup_${hex(4)}`] });
      const batch = [ours[0]!, grantFor(theirs, hex(12)), ...ours.slice(1, 4), bogus, ...ours.slice(4)];
      const outcomes = await adapter.createMany(batch, within());
      expect(outcomes.map((o) => (o.ok ? 'ok' : (o.error as { code?: string }).code))).toEqual([
        'ok',
        'BACKEND_REFUSED',
        'ok',
        'ok',
        'ok',
        'BACKEND_ERROR',
        'ok',
        'ok',
        'ok',
        'ok',
      ]);
      for (const g of ours) expect(await postgresLogin(b, g.login, g.password), g.login).toBe(true);
      for (const g of ours) expect((await answer(g)).reason, g.login).toBe('held');
      // the one refused is untouched; the one whose grant failed was rolled back
      expect(await postgresLogin(b, theirs, 'theirs-1234')).toBe(true);
      expect(await sql(b, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [bogus.login])).toHaveLength(0);
    } finally {
      await sql(b, `DROP ROLE ${theirs}`);
    }
  });

  it("sends a batch's grants on databases and schemas last; a database that does not exist fails its role alone, rolled back whole", async () => {
    // changed roles (some privileges to take back) beside new ones: one statement per object for the batch
    const changed = Array.from({ length: 3 }, () => fresh({ databases: [db, 'postgres'], schemas: [schema] }));
    await adapter.createMany(changed, within());
    const asked = { databases: [db], schemas: [schema] };
    const ours = [
      ...changed.map((g) => ({ ...g, values: postgresRoles.valuesSchema.parse(asked) })),
      ...Array.from({ length: 5 }, () => fresh(asked)),
    ];
    const bogus = fresh({ databases: [`nosuchdb_${hex(4)}`] });
    const outcomes = await adapter.createMany([...ours.slice(0, 4), bogus, ...ours.slice(4)], within());
    expect(outcomes.map((o) => (o.ok ? 'ok' : (o.error as { code?: string }).code))).toEqual([
      ...Array.from({ length: 4 }, () => 'ok'),
      'BACKEND_ERROR',
      ...Array.from({ length: 4 }, () => 'ok'),
    ]);
    for (const g of ours) expect((await answer(g)).reason, g.login).toBe('held');
    for (const g of ours) expect(await postgresLogin(b, g.login, g.password, db), g.login).toBe(true);
    expect(await sql(b, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [bogus.login])).toHaveLength(0);
  });

  it('does not drop a role that still owns objects: BACKEND_REFUSED naming them, the role kept', async () => {
    const g = fresh({ schemas: [schema] });
    await adapter.create(g, within());
    await sql(b, `CREATE TABLE ${schema}.owned_${tag} (id int)`);
    await sql(b, `ALTER TABLE ${schema}.owned_${tag} OWNER TO "${g.login}"`);
    const error = await adapter.remove(g.login, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED')).toBe(true);
    expect((error as Error).message).toContain(`owner of table ${schema}.owned_${tag}`);
    expect(await postgresLogin(b, g.login, g.password)).toBe(true);
    await sql(b, `DROP TABLE ${schema}.owned_${tag}`);
    await adapter.remove(g.login, within());
    expect((await answer(g)).reason).toBe('missing');
  });

  it('keeps no more than maxConcurrentCalls admin connections, whatever the number of calls at once', async () => {
    // an admin of its own, so that other tests' connections are not counted
    const capAdmin = `hfcap_${hex(4)}`;
    const pw = hex(12);
    await sql(b, `CREATE ROLE ${capAdmin} LOGIN SUPERUSER PASSWORD '${pw}'`);
    const capped = new PostgresRolesAdapter(
      { url: `postgres://${b.host}:${b.port}/postgres`, username: capAdmin, password: pw, maxConcurrentCalls: 2 },
      { provider: 'test', adopt: false },
    );
    try {
      const grants = Array.from({ length: 12 }, () => fresh());
      let most = 0;
      const watch = setInterval(() => {
        void sql<{ n: string }>(b, 'SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [capAdmin]).then(
          ([r]) => (most = Math.max(most, Number(r?.n ?? 0))),
          () => undefined,
        );
      }, 5);
      await Promise.all(grants.map((g) => capped.create(g, within(30_000))));
      await Promise.all(grants.map((g) => capped.holds(g, within(30_000))));
      clearInterval(watch);
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      await capped.close();
      await sql(b, `DROP ROLE ${capAdmin}`);
    }
  });
});
