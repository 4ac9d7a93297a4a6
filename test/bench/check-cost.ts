/**
 * `npx tsx test/bench/check-cost.ts [users]`: what each way of checking a consumer costs the
 * server, so that the light check of `postgres-roles` and `mongodb-users` is chosen with
 * numbers. Starts its own PostgreSQL and MongoDB wire server (FerretDB here), creates `users`
 * logins (default 1,000) through the adapters, then times 200 of each check, reading the
 * servers' CPU time (utime + stime, children included) from /proc. Prints one table.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Adapter, Grant } from '../../src/adapters/adapter.js';
import { mongodbUsers } from '../../src/adapters/mongodb-users/index.js';
import { postgresRoles } from '../../src/adapters/postgres-roles/index.js';
import { mongoLogin, postgresLogin } from '../backends/logins.js';
import { startOwned } from '../backends/provision.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';

const USERS = Number(process.argv[2] ?? 1000);
const SAMPLES = 200;
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** The pid listening on `port`. */
function listener(port: number): number {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`nothing listens on ${port}`);
  return Number(pid);
}

/** CPU milliseconds of `pid`, its reaped children, and its live children. */
function cpuMs(pid: number): number {
  const fields = (p: number) => readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = fields(pid);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter(Boolean);
  } catch {
    // no children (ps exits 1)
  }
  for (const child of children) {
    try {
      const f = fields(child);
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited meanwhile: counted in the parent's reaped children
    }
  }
  return ticks * TICK_MS;
}

async function measure(name: string, server: number, call: (i: number) => Promise<unknown>): Promise<string> {
  const before = cpuMs(server);
  const ours = process.cpuUsage();
  const started = Date.now();
  for (let i = 0; i < SAMPLES; i++) await call(i);
  const wall = (Date.now() - started) / SAMPLES;
  const serverMs = (cpuMs(server) - before) / SAMPLES;
  const spent = process.cpuUsage(ours);
  const holdfastMs = (spent.user + spent.system) / 1000 / SAMPLES;
  return `${name.padEnd(58)} ${serverMs.toFixed(2).padStart(8)} ${holdfastMs.toFixed(2).padStart(10)} ${wall.toFixed(2).padStart(8)}`;
}

const within = () => ({ signal: AbortSignal.timeout(30_000) });

async function populate<V>(adapter: Adapter<V>, grants: Grant<V>[]): Promise<void> {
  for (let i = 0; i < grants.length; i += 8)
    await Promise.all(grants.slice(i, i + 8).map((g) => adapter.create(g, within())));
}

const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const servers: OwnedBackend[] = [];
try {
  const [pgb, mongo] = await Promise.all([
    startOwned('postgres', run, settings, false),
    startOwned('mongodb', run, settings, false),
  ]);
  servers.push(pgb, mongo);
  const rows: string[] = [
    `${'check (per call, mean of 200)'.padEnd(58)} ${'server ms'.padStart(8)} ${'holdfast ms'.padStart(10)} ${'wall ms'.padStart(8)}`,
  ];

  const pgAdapter = postgresRoles.connect(
    { url: `postgres://${pgb.host}:${pgb.port}/postgres`, username: pgb.admin.username, password: pgb.admin.password },
    { provider: 'test', adopt: false },
  );
  const pgGrants = Array.from({ length: USERS }, (_, i) => ({
    login: `cost_${i}`,
    password: randomBytes(12).toString('hex'),
    values: postgresRoles.valuesSchema.parse({}),
  }));
  await populate(pgAdapter, pgGrants);
  const pgPid = listener(pgb.port);
  const pg = (i: number) => pgGrants[i % USERS]!;
  rows.push(
    await measure(`postgres-roles holds (pg_authid, verifier compared), ${USERS} roles`, pgPid, (i) =>
      pgAdapter.holds!(pg(i), within()),
    ),
  );
  rows.push(
    await measure('postgres-roles authenticates (one catalog read)', pgPid, (i) =>
      pgAdapter.authenticates!(pg(i), within()),
    ),
  );
  rows.push(
    await measure('a login as the role on a fresh connection', pgPid, (i) =>
      postgresLogin(pgb, pg(i).login, pg(i).password),
    ),
  );
  await pgAdapter.close();

  const mAdapter = mongodbUsers.connect(
    {
      url: `mongodb://${mongo.host}:${mongo.port}/?authSource=admin`,
      username: mongo.admin.username,
      password: mongo.admin.password,
    },
    { provider: 'test', adopt: false },
  );
  const mGrants = Array.from({ length: USERS }, (_, i) => ({
    login: `cost_${i}`,
    password: randomBytes(12).toString('hex'),
    values: mongodbUsers.valuesSchema.parse({ database: 'cost' }),
  }));
  await populate(mAdapter, mGrants);
  const mPid = listener(mongo.port);
  const m = (i: number) => mGrants[i % USERS]!;
  rows.push(
    await measure(`mongodb-users holds (usersInfo, showCredentials), ${USERS} users`, mPid, (i) =>
      mAdapter.holds!(m(i), within()),
    ),
  );
  rows.push(
    await measure('mongodb-users authenticates (admin.system.users by _id)', mPid, (i) =>
      mAdapter.authenticates!(m(i), within()),
    ),
  );
  rows.push(
    await measure('a login as the user on a fresh connection', mPid, (i) =>
      mongoLogin(mongo, m(i).login, m(i).password, 'cost'),
    ),
  );
  await mAdapter.close();

  console.log(`${pgb.flavor}; ${mongo.flavor}\n${rows.join('\n')}`);
} finally {
  await Promise.allSettled(servers.map((s) => s.stop()));
  await reapRunDir(run);
}
