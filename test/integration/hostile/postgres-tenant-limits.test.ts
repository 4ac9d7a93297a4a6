/**
 * A PostgreSQL tenant cannot take what the others need, nor keep what it gave itself: its role's CONNECTION LIMIT is the
 * provider's policy (applied, compared, an operator's never drift), its own `ALTER ROLE … SET` is found by the deep
 * check and reset by the apply, and what PUBLIC holds beyond the policy (CONNECT and TEMPORARY on every database by
 * default) is named by `holdfast doctor` with what to revoke.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter, Grant } from '../../../src/adapters/adapter.js';
import { postgresRoles, type PostgresRolesValues } from '../../../src/adapters/postgres-roles/index.js';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { HOLDFAST_MAIN } from '../../support/holdfast-cli.js';
import { engineFixtures } from '../engine/engine-fixture.js';
import { postgresAdminOf, sql } from './database-admin.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(15_000) });

/** A session as `login` (closed by the caller), or the server's refusal. */
async function session(b: BackendEndpoint, login: string, password: string, database = 'postgres'): Promise<pg.Client> {
  const client = new pg.Client({ host: b.host, port: b.port, user: login, password, database });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('postgres-roles: a tenant takes no more than its share, and keeps nothing it gave itself', () => {
  const b = sharedBackend('postgres');
  const tag = hex(3);
  const adapters: Adapter<PostgresRolesValues>[] = [];
  const sessions: pg.Client[] = [];
  const logins: string[] = [];
  /** An admin that may create roles but is no superuser (nor reads pg_authid), as many operators run holdfast. */
  const weakAdmin = { ...postgresAdminOf(b), username: `hfladm${tag}`, password: hex(12) };

  beforeAll(async () => {
    await sql(b, `CREATE ROLE ${weakAdmin.username} LOGIN CREATEROLE PASSWORD '${weakAdmin.password}'`);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end().catch(() => undefined)));
    for (const login of [...logins, weakAdmin.username])
      await sql(b, `DROP ROLE IF EXISTS "${login}"`).catch(() => undefined);
    await Promise.all(adapters.map((a) => a.close()));
  });

  /** An adapter as `holdfast run` makes it from a provider's policy. */
  const provider = (policy: unknown, admin = postgresAdminOf(b)) => {
    const adapter = postgresRoles.connect(
      admin,
      { provider: `limits${tag}`, adopt: false },
      postgresRoles.policySchema.parse(policy),
    );
    adapters.push(adapter);
    return adapter;
  };
  const grant = (values: unknown = {}): Grant<PostgresRolesValues> => {
    const login = `hfl${tag}_${hex(4)}`;
    logins.push(login);
    return { login, password: hex(12), values: postgresRoles.valuesSchema.parse(values) };
  };
  const answer = async (adapter: Adapter<PostgresRolesValues>, g: Grant<PostgresRolesValues>) => {
    const a = await adapter.holds!(g, within());
    return a.held ? { reason: 'held', detail: '' } : a;
  };

  it("a tenant holding its policy's 3 connections is refused a 4th, while another tenant still logs in; its password is still known good", async () => {
    const cache = provider({ connectionLimit: 3 });
    const [a, other] = [grant(), grant()];
    await cache.create(a, within());
    await cache.create(other, within());
    for (let i = 0; i < 3; i++) sessions.push(await session(b, a.login, a.password));
    const fourth = await session(b, a.login, a.password).then(
      (s) => (sessions.push(s), 'connected'),
      (error: Error) => error.message,
    );
    expect(fourth).toMatch(/too many connections for role/);
    const theirs = await session(b, other.login, other.password);
    sessions.push(theirs);
    expect((await theirs.query<{ ok: number }>('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);

    // the deep check and a check by logging in (an admin that may not read pg_authid) both find it held meanwhile
    expect(await answer(cache, a)).toEqual({ reason: 'held', detail: '' });
    const weak = provider({ connectionLimit: 3 }, weakAdmin);
    expect(await weak.authenticates!(a, within())).toBe(true);
    expect(await answer(weak, a)).toEqual({ reason: 'held', detail: '' });
  });

  it("an operator's limit in the policy is applied and held, not drift; one set by hand is put back to the policy's", async () => {
    const cache = provider({ connectionLimit: 5 });
    const g = grant();
    await cache.create(g, within());
    const limit = async () =>
      (await sql<{ n: number }>(b, 'SELECT rolconnlimit AS n FROM pg_roles WHERE rolname = $1', [g.login]))[0]?.n;
    expect(await limit()).toBe(5);
    expect(await answer(cache, g)).toEqual({ reason: 'held', detail: '' });

    await sql(b, `ALTER ROLE "${g.login}" CONNECTION LIMIT -1`);
    const drift = await answer(cache, g);
    expect(drift.reason).toBe('rules-differ');
    expect(drift.detail).toBe(
      "connection limit: the role has CONNECTION LIMIT -1 (no limit), the provider's policy asks for 5",
    );
    await cache.create(g, within());
    expect(await limit()).toBe(5);
    expect(await answer(cache, g)).toEqual({ reason: 'held', detail: '' });
  });

  it("a tenant's own ALTER ROLE … SET (everywhere and in one database) is found by the deep check, its value unsaid, and reset by the apply", async () => {
    const cache = provider({ allowedDatabases: ['postgres'] });
    const g = grant({ databases: ['postgres'] });
    await cache.create(g, within());
    const self = await session(b, g.login, g.password);
    sessions.push(self);
    await self.query("ALTER ROLE CURRENT_USER SET work_mem = '1GB'");
    await self.query('ALTER ROLE CURRENT_USER IN DATABASE postgres SET statement_timeout = 0');

    const found = await answer(cache, g);
    expect(found.reason).toBe('rules-differ');
    expect(found.detail).toBe(
      'settings: the role has work_mem, statement_timeout in database postgres of its own (ALTER ROLE … SET); the grant asks for none',
    );
    expect(found.detail).not.toContain('1GB');

    await cache.create(g, within());
    expect(await answer(cache, g)).toEqual({ reason: 'held', detail: '' });
    const rows = await sql(
      b,
      'SELECT 1 FROM pg_db_role_setting WHERE setrole = (SELECT oid FROM pg_roles WHERE rolname = $1)',
      [g.login],
    );
    expect(rows).toEqual([]);
    const fresh = await session(b, g.login, g.password);
    sessions.push(fresh);
    expect((await fresh.query<{ work_mem: string }>('SHOW work_mem')).rows[0]?.work_mem).not.toBe('1GB');
  });
});

describe("holdfast doctor: what PUBLIC holds beyond a PostgreSQL provider's policy", () => {
  const b = sharedBackend('postgres');
  const fixture = engineFixtures();
  const tag = hex(3);
  const [allowed, beyond] = [`hfledger_a_${tag}`, `hfledger_b_${tag}`];
  const tenant = `hft${tag}`;
  const password = hex(12);

  beforeAll(async () => {
    await sql(b, `CREATE DATABASE ${allowed}`);
    await sql(b, `CREATE DATABASE ${beyond}`);
  });
  afterAll(async () => {
    await sql(b, `DROP DATABASE IF EXISTS ${allowed} WITH (FORCE)`);
    await sql(b, `DROP DATABASE IF EXISTS ${beyond} WITH (FORCE)`);
    await sql(b, `DROP ROLE IF EXISTS ${tenant}`);
  });

  it('names each database where PUBLIC holds CONNECT and TEMPORARY beyond allowedDatabases, and each schema where it holds CREATE, with what to revoke', async () => {
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider: b,
      consumers: 1,
      policy: `{ allowedDatabases: [postgres, ${allowed}] }`,
    });
    // a consumer with no database at all, made as holdfast makes it
    const adapter = postgresRoles.connect(postgresAdminOf(b), { provider: `doctor${tag}`, adopt: false });
    await adapter.create({ login: tenant, password, values: postgresRoles.valuesSchema.parse({}) }, within());
    await adapter.close();
    const asTenant = await session(b, tenant, password, beyond);
    await asTenant.query('CREATE TEMPORARY TABLE mine (id int)'); // what PUBLIC's defaults give it
    await asTenant.end();
    // schema public as PostgreSQL before 15 made it: CREATE for every login
    const inAllowed = new pg.Client({
      host: b.host,
      port: b.port,
      user: b.admin.username,
      password: b.admin.password,
      database: allowed,
    });
    await inAllowed.connect();
    await inAllowed.query('GRANT CREATE ON SCHEMA public TO PUBLIC');
    await inAllowed.end();

    const doctor = () => {
      const run = spawnSync(
        process.execPath,
        ['--import', 'tsx', HOLDFAST_MAIN, 'doctor', '-c', join(f.dir, 'holdfast.yaml')],
        {
          encoding: 'utf8',
        },
      );
      expect(run.stderr).toBe('');
      const lines = run.stdout.split('\n');
      // the shared server's other databases (template1, other tests') are named too: only this test's are compared
      const ours = lines.filter((l) => l.includes(`database "${beyond}"`) || l.includes(`database "${allowed}"`));
      return { code: run.status, ours, all: lines };
    };
    const where = `holdfast doctor: backend of provider cache (postgres://${b.host}:${b.port}/postgres)`;
    const before = doctor();
    expect(before.code).toBe(1);
    expect(before.all.filter((l) => l.includes('on database "postgres"'))).toEqual([]); // allowed: not named
    expect(before.ours).toEqual([
      `${where}: PUBLIC holds CONNECT, TEMPORARY on database "${beyond}", which the policy does not allow (allowedDatabases: "postgres", "${allowed}"): every login, each consumer's included, may connect there and create temporary tables; run REVOKE CONNECT, TEMPORARY ON DATABASE "${beyond}" FROM PUBLIC`,
      `${where}: PUBLIC holds CREATE on schema "public" in database "${allowed}": every login that connects there may create objects in it; run REVOKE CREATE ON SCHEMA "public" FROM PUBLIC in that database`,
    ]);

    // holdfast run says the same once at start, as a warning of the provider (its consumers held all the same)
    await f.startHeld();
    const warned = () =>
      f.logs.filter((l) => l.level === 40 && l.provider === 'cache' && l.msg.includes(`"${beyond}"`));
    await f.until('the warning of what PUBLIC holds', () => warned().length > 0);
    expect(warned().map((l) => l.msg)).toEqual([
      `provider cache: ${before.ours[0]!.slice(`${where}: `.length)} (holdfast does not change PUBLIC)`,
    ]);

    // what the doctor says to run, run: the tenant no longer reaches the database, and the doctor no longer names it
    await sql(b, `REVOKE CONNECT, TEMPORARY ON DATABASE "${beyond}" FROM PUBLIC`);
    const refused = await session(b, tenant, password, beyond).then(
      (s) => (void s.end(), 'connected'),
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/permission denied for database/);
    expect(doctor().ours).toHaveLength(1);
  });
});
