/**
 * The `postgres-roles` adapter's batches against a PostgreSQL that logs every statement (`log_statement = 'all'`): a
 * batch of roles none of which exists (a first apply, a server re-initialised) is written in one statement, and what
 * it writes is what a role-by-role apply writes; a batch where that does not fit (a role exists, a group is missing, a
 * role would reach a privileged group) goes role by role, each with its own outcome. The deep checks of a batch are one
 * catalog read, each answer the one `holds` gives.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Each, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import {
  PostgresRolesAdapter,
  postgresRoles,
  type PostgresRolesValues,
} from '../../../src/adapters/postgres-roles/index.js';
import { ownBackend, type BackendEndpoint } from '../../backends/index.js';
import { postgresLogin } from '../../backends/logins.js';
import type { OwnedBackend } from '../../backends/types.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 20_000) => ({ signal: AbortSignal.timeout(ms) });
const grantFor = (values: unknown = {}): Grant<PostgresRolesValues> => ({
  login: `hfb_${hex(5)}`,
  password: hex(12),
  values: postgresRoles.valuesSchema.parse(values),
});
const codes = (outcomes: Array<Each<unknown>>) =>
  outcomes.map((o) => (o.ok ? 'ok' : ((o.error as { code?: string }).code ?? 'error')));

const adminOf = (b: BackendEndpoint) => ({
  url: `postgres://${b.host}:${b.port}/postgres`,
  username: b.admin.username,
  password: b.admin.password,
});

async function sql(b: BackendEndpoint, text: string): Promise<void> {
  const client = new pg.Client({ host: b.host, port: b.port, user: b.admin.username, password: b.admin.password });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe('postgres-roles batches', () => {
  let b: OwnedBackend;
  let adapter: PostgresRolesAdapter;
  const tag = hex(3);
  const [group, powerful, db] = [`hfg_${tag}`, `hfpow_${tag}`, `hfdb_${tag}`];
  /**
   * The statements the server ran since `from` (its log's offset), as logged: one entry per simple query (`statement:`)
   * or per query with parameters (`execute <unnamed>:`).
   */
  const statements = (from: number) =>
    [
      ...b.serverLog!()
        .slice(from)
        .matchAll(/(?:statement|execute [^:]*): ([\s\S]*?)(?=\n\S|$)/g),
    ].map((m) => m[1]!);

  beforeAll(async () => {
    b = await ownBackend('postgres', { postgresSettings: { log_statement: 'all' } });
    adapter = new PostgresRolesAdapter(adminOf(b), { provider: 'test', adopt: false });
    await sql(b, `CREATE ROLE ${group} NOLOGIN`);
    await sql(b, `CREATE ROLE ${powerful} NOLOGIN CREATEROLE`);
    await sql(b, `CREATE DATABASE ${db}`);
  }, 60_000);
  afterAll(async () => {
    await adapter.close();
  });

  it('writes a batch of new roles in one statement, each held and logging in as a role-by-role apply would leave it', async () => {
    const grants = Array.from({ length: 20 }, (_, i) => grantFor(i % 2 ? { databases: [db], roles: [group] } : {}));
    const from = b.serverLog!().length;
    expect(codes(await adapter.createMany(grants, within()))).toEqual(grants.map(() => 'ok'));
    const creates = statements(from).filter((s) => s.includes('CREATE ROLE'));
    expect(creates).toHaveLength(1);
    expect(creates[0]!.match(/CREATE ROLE "hfb_/g)).toHaveLength(20);
    for (const g of grants) {
      expect(await postgresLogin(b, g.login, g.password), g.login).toBe(true);
      expect(await adapter.holds(g, within()), g.login).toEqual({ held: true });
    }
    // the same roles, forgotten and applied one by one: the same answers
    const byOne = grants.map((g) => ({ ...g, login: `${g.login}x` }));
    for (const g of byOne) await adapter.create(g, within());
    for (const g of byOne) expect(await adapter.holds(g, within()), g.login).toEqual({ held: true });
  });

  it('goes role by role where a role exists, a group is missing or a role would reach a privileged group: each its own outcome', async () => {
    const existing = grantFor();
    await adapter.create(existing, within());
    const [ok1, ok2, missingGroup, reachesPower] = [
      grantFor(),
      grantFor({ databases: [db] }),
      grantFor({ roles: [`nosuchgroup_${tag}`] }),
      grantFor(),
    ];
    // a role of the batch that exists: role by role
    const mixed = await adapter.createMany([ok1, { ...existing, password: hex(12) }], within());
    expect(codes(mixed)).toEqual(['ok', 'ok']);
    // a group that does not exist: that role alone fails, rolled back
    expect(codes(await adapter.createMany([ok2, missingGroup], within()))).toEqual(['ok', 'BACKEND_ERROR']);
    expect(await postgresLogin(b, missingGroup.login, missingGroup.password)).toBe(false);
    // a role that would be a member of a CREATEROLE group (allowed by the grant, refused by the adapter): refused alone
    await sql(b, `CREATE ROLE ${reachesPower.login} NOLOGIN`);
    await sql(b, `DROP ROLE ${reachesPower.login}`);
    const viaGroup = { ...reachesPower, values: postgresRoles.valuesSchema.parse({ roles: [powerful] }) };
    const withPower = await adapter.createMany([grantFor(), viaGroup], within());
    expect(codes(withPower)).toEqual(['ok', 'BACKEND_REFUSED']);
    expect(await postgresLogin(b, viaGroup.login, viaGroup.password)).toBe(false);
    for (const g of [ok1, ok2]) expect(await postgresLogin(b, g.login, g.password), g.login).toBe(true);
  });

  it('asks a batch of deep checks in one catalog read, each answer the one holds gives', async () => {
    const [held, changed, rolesDiffer] = [grantFor(), grantFor(), grantFor({ databases: [db] })];
    await adapter.createMany([held, changed, rolesDiffer], within());
    const batch = [
      held,
      { ...changed, password: hex(12) },
      { ...rolesDiffer, values: postgresRoles.valuesSchema.parse({}) },
      grantFor(), // never applied
      { ...grantFor(), login: 'a"b' }, // refused before anything is sent
    ];
    const from = b.serverLog!().length;
    const many = await adapter.holdsMany(batch, within());
    expect(statements(from).filter((s) => s.includes('role_state'))).toHaveLength(1);
    const one = await Promise.all(
      batch.map((g) => adapter.holds(g, within()).then((a): Each<HoldsAnswer> => ({ ok: true, value: a }), codeOf)),
    );
    const reasons = (answers: Array<Each<HoldsAnswer>>) =>
      answers.map((a) => (a.ok ? (a.value.held ? 'held' : a.value.reason) : (a.error as { code: string }).code));
    expect(reasons(many)).toEqual(['held', 'password-differs', 'grants-differ', 'missing', 'BACKEND_REFUSED']);
    expect(reasons(many)).toEqual(reasons(one));
  });
});

function codeOf(error: unknown): Each<HoldsAnswer> {
  return { ok: false, error };
}
