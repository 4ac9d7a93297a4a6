/**
 * A `postgres-roles` provider on a PostgreSQL primary and its streaming standby
 * (`pg_basebackup -R`), listed in `admin.urls`: holdfast writes to the one not in recovery, the
 * roles reach the standby by PostgreSQL's replication, and after `pg_ctl promote` (the old
 * primary stopped) it follows the new primary, healing there within the interval. Two
 * primaries at once (a standby promoted beside a primary that still runs): it writes to neither.
 * An old primary back as a standby of the new one: a write it refuses (25006) moves the pool.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import { postgresRoles, type PostgresRolesValues } from '../../../src/adapters/postgres-roles/index.js';
import { NoPrimaryError, postgresHost, PrimaryPool } from '../../../src/adapters/postgres-roles/primary-pool.js';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { ownPostgresPair, type BackendEndpoint } from '../../backends/index.js';
import { postgresLogin } from '../../backends/logins.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';

const urlOf = (b: BackendEndpoint) => `postgres://${b.host}:${b.port}/postgres`;
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(b: BackendEndpoint, text: string): Promise<T[]> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Polls until `predicate` holds; the time it took, or a failure naming `what`. */
async function until(what: string, predicate: () => Promise<boolean>, timeoutMs = 20_000): Promise<number> {
  const start = Date.now();
  while (!(await predicate().catch(() => false))) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - start;
}

/**
 * Lists `hosts` in the fixture's provider as `admin.urls` instead of its one url, as an operator would, and reads the
 * file again.
 */
async function listHosts(f: EngineFixture, hosts: BackendEndpoint[]): Promise<void> {
  const file = join(f.dir, 'holdfast.yaml');
  const text = readFileSync(file, 'utf8');
  const one = `      url: ${urlOf(f.provider)}\n`;
  expect(text).toContain(one);
  writeFileSync(file, text.replace(one, `      urls: [${hosts.map(urlOf).join(', ')}]\n`));
  f.config = await loadConfig(file, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
}

function adminOf(hosts: BackendEndpoint[]): AdminConnection {
  const [first] = hosts as [BackendEndpoint];
  return { url: urlOf(first), urls: hosts.map(urlOf), username: first.admin.username, password: first.admin.password };
}

function grantFor(login: string): Grant<PostgresRolesValues> {
  return { login, password: randomBytes(18).toString('base64url'), values: postgresRoles.valuesSchema.parse({}) };
}

describe('a PostgreSQL primary and its streaming standby, through the engine', () => {
  const fixture = engineFixtures();

  it('holds the roles on the primary (they log in on the standby); after a promotion follows the new primary and heals a role dropped there within the interval', async () => {
    const { primary, standby } = await ownPostgresPair();
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider: primary,
      consumers: 3,
      timing: { verifyEvery: '1s', checkTimeout: '900ms', deepCheckEvery: '4s' },
    });
    await listHosts(f, [primary, standby]);
    await f.startHeld();
    for (const c of f.consumers) {
      expect(await f.canLogin(c, primary)).toBe(true);
      // nothing is written to the standby: replication brings each role there
      await until(`${c.login} replicated to the standby`, () => f.canLogin(c, standby));
    }
    await f.until('every record settled: checks are light from now on', () => f.settled());

    // the primary lost, the standby promoted: a role dropped by hand on the new primary
    await primary.down();
    await standby.promote(); // pg_ctl promote -w: returns once the standby takes writes
    const promotedAt = Date.now();
    expect(await sql<{ standby: boolean }>(standby, 'SELECT pg_is_in_recovery() AS standby')).toEqual([
      { standby: false },
    ]);
    const [dropped, ...kept] = f.consumers as [Consumer, ...Consumer[]];
    await sql(standby, `DROP OWNED BY "${dropped.login}"; DROP ROLE "${dropped.login}"`);
    expect(await f.canLogin(dropped, standby)).toBe(false);

    // the next check finds the old primary gone, asks every host, and runs on the new one: within the interval (1 s),
    // bounded generously
    const healedIn = await f.until(
      'the dropped role healed on the new primary',
      () => f.canLogin(dropped, standby),
      15_000,
    );
    const sincePromotion = Date.now() - promotedAt;
    console.log(
      `[postgres-standby] promotion to heal on the new primary: ${sincePromotion} ms (role dropped to healed: ${healedIn} ms; verifyEvery 1 s)`,
    );
    for (const c of kept) expect(await f.canLogin(c, standby)).toBe(true);
    expect(
      f.logsFor(dropped).some((l) => l.msg.startsWith('not held (missing: ')),
      f
        .logsFor(dropped)
        .map((l) => l.msg)
        .join('\n'),
    ).toBe(true);
    await f.until('every consumer held', () => f.allHeld());
  });
});

describe('the postgres-roles adapter on several hosts', () => {
  it('writes to the host not in recovery, wherever it is listed', async () => {
    const { primary, standby } = await ownPostgresPair();
    const adapter = postgresRoles.connect(adminOf([standby, primary]), { provider: 'standby-first', adopt: false });
    try {
      const grant = grantFor(`hfsb_${randomBytes(3).toString('hex')}`);
      await adapter.create(grant, within());
      expect(await postgresLogin(primary, grant.login, grant.password)).toBe(true);
      await until('the role replicated to the standby', () => postgresLogin(standby, grant.login, grant.password));
      expect(await adapter.holds!(grant, within())).toEqual({ held: true });
    } finally {
      await adapter.close();
    }
  });

  it('after a write refused read-only by the old primary, back as a standby of the new one, writes to the new primary', async () => {
    const { primary, standby } = await ownPostgresPair();
    const adapter = postgresRoles.connect(adminOf([primary, standby]), { provider: 'switchover', adopt: false });
    try {
      await adapter.create(grantFor(`hfsb_${randomBytes(3).toString('hex')}`), within());
      // a clean switchover, quicker than holdfast's asking beside the calls (10 s) on an idle machine
      await primary.down();
      await standby.promote();
      await primary.followAsStandby({ port: standby.port, password: standby.admin.password });
      const first = grantFor(`hfsb_${randomBytes(3).toString('hex')}`);
      const refused = await adapter.create(first, within()).then(
        () => undefined,
        (error: unknown) => error,
      );
      // refused by the old primary (could not apply: not the backend's answer about the role), unless the asking beside
      // the calls came first
      if (refused !== undefined)
        expect(
          isHoldfastError(refused) &&
            refused.code === 'BACKEND_UNAVAILABLE' &&
            refused.message.includes('read-only transaction'),
          (refused as Error).message,
        ).toBe(true);
      const second = grantFor(`hfsb_${randomBytes(3).toString('hex')}`);
      await adapter.create(second, within());
      expect(await postgresLogin(standby, second.login, second.password)).toBe(true);
    } finally {
      await adapter.close();
    }
  });

  it('writes to neither of two primaries (a standby promoted beside a primary that still runs), naming both', async () => {
    const { primary, standby } = await ownPostgresPair();
    await standby.promote();
    const adapter = postgresRoles.connect(adminOf([primary, standby]), { provider: 'two-primaries', adopt: false });
    try {
      const grant = grantFor(`hfsb_${randomBytes(3).toString('hex')}`);
      const refused = await adapter.create(grant, within()).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isHoldfastError(refused) && refused.code).toBe('BACKEND_UNAVAILABLE');
      expect(String((refused as Error).message)).toContain(`2 listed hosts are primaries (not in recovery)`);
      expect(String((refused as Error).message)).toContain(
        `127.0.0.1:${primary.port} is a primary; 127.0.0.1:${standby.port} is a primary`,
      );
      for (const host of [primary, standby]) expect(await postgresLogin(host, grant.login, grant.password)).toBe(false);
    } finally {
      await adapter.close();
    }
  });
});

describe('the admin pool on several hosts', () => {
  it('moves to the new primary when the old one, back as its standby, refuses a write as read-only (SQLSTATE 25006)', async () => {
    const { primary, standby } = await ownPostgresPair();
    // asked at the first call only (never beside the calls): what moves it is the refusal
    const pool = new PrimaryPool(
      [primary, standby].map((b) => postgresHost(urlOf(b))),
      { user: 'postgres', password: primary.admin.password, max: 2 },
      Infinity,
    );
    const where = () =>
      pool.read(
        within(),
        async (c) =>
          (
            await c.query<{ standby: boolean; port: number }>(
              "SELECT pg_is_in_recovery() AS standby, current_setting('port')::int AS port",
            )
          ).rows[0],
      );
    try {
      expect(await where()).toEqual({ standby: false, port: primary.port });
      // a clean switchover: the old primary stopped, the standby promoted, the old primary started again as its standby
      await primary.down();
      await standby.promote();
      await primary.followAsStandby({ port: standby.port, password: standby.admin.password });
      expect(await where()).toEqual({ standby: true, port: primary.port }); // reads still answer there

      // a write sent there fails (not run again: its statements went to a standby), and tells the pool
      const refused = await pool
        .transaction(within(), (c) => c.query(`CREATE ROLE hfro_${randomBytes(3).toString('hex')}`))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect((refused as { code?: unknown } | undefined)?.code).toBe('25006');
      expect(await where()).toEqual({ standby: false, port: standby.port });
    } finally {
      await pool.end();
    }
  });

  it('ends a call past its deadline on the host it runs on, the primary, listed after a standby', async () => {
    const { primary, standby } = await ownPostgresPair();
    const pool = new PrimaryPool(
      [standby, primary].map((b) => postgresHost(urlOf(b))),
      { user: 'postgres', password: primary.admin.password, max: 2, application_name: 'holdfast' },
      Infinity,
    );
    const sleeping = async () =>
      (
        await sql<{ n: number }>(
          primary,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'holdfast' AND query LIKE 'SELECT pg_sleep(60)%'",
        )
      )[0]?.n;
    try {
      const controller = new AbortController();
      // its failure is taken at once (it comes while the test still waits below: else an unhandled rejection)
      const failure = pool
        .read({ signal: controller.signal }, (c) => c.query('SELECT pg_sleep(60) AS slept'))
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await until('the call running on the primary', async () => (await sleeping()) === 1);
      controller.abort();
      // its session is terminated there (a closed socket alone leaves pg_sleep running its 60 s)
      await until('the call ended on the primary', async () => (await sleeping()) === 0, 15_000);
      expect(await failure).toBeInstanceOf(Error);
      // and the next call is served, on the primary
      expect(
        await pool.read(
          within(),
          async (c) => (await c.query<{ port: number }>("SELECT current_setting('port')::int AS port")).rows[0]?.port,
        ),
      ).toBe(primary.port);
    } finally {
      await sql(primary, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'holdfast'"); // a session left running would hold pool.end()
      await pool.end();
    }
  });

  it('moves there by itself, asking every host beside the calls, when nothing fails (the old primary back as a standby, read)', async () => {
    const { primary, standby } = await ownPostgresPair();
    const pool = new PrimaryPool(
      [primary, standby].map((b) => postgresHost(urlOf(b))),
      { user: 'postgres', password: primary.admin.password, max: 2 },
      200,
    );
    const port = () =>
      pool.read(
        within(),
        async (c) => (await c.query<{ port: number }>("SELECT current_setting('port')::int AS port")).rows[0]?.port,
      );
    try {
      expect(await port()).toBe(primary.port);
      await primary.down();
      await standby.promote();
      await primary.followAsStandby({ port: standby.port, password: standby.admin.password });
      // reads succeed on the old primary, a standby now: only the asking beside the calls moves the pool
      await until('the pool on the new primary', async () => (await port()) === standby.port);
    } finally {
      await pool.end();
    }
  });

  it('stops when a second primary appears beside the calls (the standby promoted while the primary runs): every call fails naming both', async () => {
    const { primary, standby } = await ownPostgresPair();
    const pool = new PrimaryPool(
      [primary, standby].map((b) => postgresHost(urlOf(b))),
      { user: 'postgres', password: primary.admin.password, max: 2 },
      200,
    );
    try {
      await pool.read(within(), (c) => c.query('SELECT 1'));
      await standby.promote();
      await until('calls refused, naming both primaries', async () => {
        const error = await pool
          .read(within(), (c) => c.query('SELECT 1'))
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        return error instanceof NoPrimaryError && error.message.includes('2 listed hosts are primaries');
      });
      expect(
        await pool
          .read(within(), (c) => c.query('SELECT 1'))
          .then(
            () => 'answered',
            (e: unknown) => (e instanceof NoPrimaryError ? 'refused' : String(e)),
          ),
      ).toBe('refused');
    } finally {
      await pool.end();
    }
  });
});
