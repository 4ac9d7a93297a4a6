/**
 * A deadline PostgreSQL keeps, and a connection cut mid-call: an apply that waits on a lock
 * another session holds (or sends statement after statement) ends on the server when holdfast
 * gives up, its connection is not handed to the next call, and a connection terminated while a
 * call uses it fails that call alone (never the process).
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
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend } from '../../backends/index.js';
import { postgresLogin } from '../../backends/logins.js';
import { postgresAdminOf, sql } from './database-admin.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 15_000) => ({ signal: AbortSignal.timeout(ms), deadline: Date.now() + ms });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('postgres-roles: a deadline the server keeps; a connection cut mid-call', () => {
  const b = sharedBackend('postgres');
  const tag = hex(3);
  const roles: string[] = [];
  /** Admin sessions other than holdfast's (a DBA holding a lock), closed after the file. */
  const others: pg.Client[] = [];
  let adapter: PostgresRolesAdapter;
  /** Errors thrown out of the process (an 'error' event no one listens to): none may be. */
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  /** The adapter's sessions' application_name. */
  const app = 'holdfast';

  beforeAll(() => {
    process.on('uncaughtException', onUncaught);
    adapter = new PostgresRolesAdapter(postgresAdminOf(b, { maxConcurrentCalls: 2 }), {
      provider: `deadline${tag}`,
      adopt: false,
    });
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    for (const c of others) await c.end().catch(() => undefined);
    await adapter.close();
    for (const role of roles.reverse()) await sql(b, `DROP ROLE IF EXISTS "${role}"`).catch(() => undefined);
  });

  const grant = (values: unknown = {}): Grant<PostgresRolesValues> => {
    const login = `hfd${tag}_${hex(4)}`;
    roles.push(login);
    return { login, password: hex(12), values: postgresRoles.valuesSchema.parse(values) };
  };
  /** Another admin session that holds the role's row lock (an ALTER ROLE not yet committed) until it is ended. */
  const lockRole = async (login: string): Promise<pg.Client> => {
    const client = new pg.Client({
      host: b.host,
      port: b.port,
      user: b.admin.username,
      password: b.admin.password,
      database: 'postgres',
      application_name: `dba${tag}`,
    });
    client.on('error', () => undefined);
    others.push(client);
    await client.connect();
    await client.query(`BEGIN; ALTER ROLE "${login}" CONNECTION LIMIT 7`);
    return client;
  };
  /** holdfast's sessions for this test's roles that still run something or sit in a transaction. */
  const busy = async (login: string) =>
    sql<{ pid: number; state: string; wait: string | null }>(
      b,
      "SELECT pid, state, wait_event_type AS wait FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid() AND (state = 'active' OR state LIKE 'idle in transaction%') AND query LIKE '%' || $2 || '%'",
      [app, login],
    );
  const until = async (what: string, predicate: () => Promise<boolean>, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!(await predicate())) {
      if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
      await pause(100);
    }
  };

  it("an apply waiting on a lock is ended by the server itself at its deadline (lock_timeout), before holdfast's own signal aborts", async () => {
    const g = grant();
    await adapter.create(g, within());
    const dba = await lockRole(g.login);
    // the server is told 1.5 s; the signal would wait 25 s
    const started = Date.now();
    const error = await adapter
      .create({ ...g, password: hex(12) }, { signal: AbortSignal.timeout(25_000), deadline: Date.now() + 1_500 })
      .catch((e: unknown) => e);
    expect(isHoldfastError(error, 'DEADLINE_EXCEEDED'), String(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000); // generous: the server ended it, not the 25 s signal
    expect(await busy(g.login)).toEqual([]);
    await dba.query('ROLLBACK');
    expect(await postgresLogin(b, g.login, g.password)).toBe(true); // unchanged: the transaction was rolled back
  });

  it('an apply waiting on a lock whose signal aborts (no deadline said): its session is ended on the server, its locks released, and the next calls are served', async () => {
    const g = grant();
    await adapter.create(g, within());
    const dba = await lockRole(g.login);
    const error = await adapter
      .create({ ...g, password: hex(12) }, { signal: AbortSignal.timeout(1_000) })
      .catch((e: unknown) => e);
    expect(isHoldfastError(error, 'DEADLINE_EXCEEDED'), String(error)).toBe(true);
    // a moment after, holdfast runs nothing on the server for it any more (before, it waited on the lock as long as the
    // DBA held it)
    await until('no holdfast session still waits for the lock', async () => (await busy(g.login)).length === 0);
    // the provider's two call slots are free: other consumers are served while the DBA still holds the lock
    const others = [grant(), grant()];
    await Promise.all(others.map((o) => adapter.create(o, within())));
    for (const o of others) expect(await adapter.holds(o, within())).toEqual({ held: true });
    await dba.query('ROLLBACK');
    await adapter.create(g, within()); // the lock gone: applied again
    expect(await adapter.holds(g, within())).toEqual({ held: true });
  });

  it('an apply of 100,000 statements stops at its deadline: nothing more is sent, and its transaction does not stay open on the server', async () => {
    const g = grant();
    await adapter.create(g, within());
    // the same database, many times: each GRANT is sent (as in the measured case)
    const values: PostgresRolesValues = {
      databases: Array.from({ length: 100_000 }, () => 'postgres'),
      schemas: [],
      roles: [],
    };
    await sql(b, `REVOKE CONNECT ON DATABASE postgres FROM "${g.login}"`);
    const error = await adapter
      .create({ ...g, values }, { signal: AbortSignal.timeout(1_000) })
      .catch((e: unknown) => e);
    expect(isHoldfastError(error, 'DEADLINE_EXCEEDED'), String(error)).toBe(true);
    await until('no holdfast session still at work for it', async () => (await busy(g.login)).length === 0);
    await pause(500);
    expect(await busy(g.login)).toEqual([]);
    expect(await adapter.holds(grant(), within())).toMatchObject({ held: false, reason: 'missing' }); // the provider answers
  });

  it('the admin connection terminated while an apply waits on a role lock: that apply fails as could-not-ask, the process lives, and the next calls are served', async () => {
    const g = grant();
    await adapter.create(g, within());
    const dba = await lockRole(g.login);
    const applying = adapter.create({ ...g, password: hex(12) }, within(30_000)).catch((e: unknown) => e);
    await until('the apply waits on the lock', async () => (await busy(g.login)).some((s) => s.wait === 'Lock'));
    const [waiting] = await busy(g.login);
    await sql(b, 'SELECT pg_terminate_backend($1)', [waiting!.pid]);
    const error = await applying;
    expect(isHoldfastError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
    await dba.query('ROLLBACK');
    // the provider still serves: the same consumer applied again, another created and checked
    await adapter.create(g, within());
    const other = grant();
    await adapter.create(other, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
    expect(await adapter.holds(other, within())).toEqual({ held: true });
    await pause(200);
    expect(uncaught.map(String)).toEqual([]);
  });
});
