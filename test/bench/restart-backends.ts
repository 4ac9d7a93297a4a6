/**
 * `npx tsx test/bench/restart-backends.ts --consumers 1000 [--case postgres|s3|sentinel]`: issue 42's node events on
 * the backends other than one Redis, at `verifyEvery: 60s`. For each case N consumers are seeded held (records, queue
 * notes and logins, as `seed.ts` leaves a running holdfast), `holdfast run` is started (an engine child process) and
 * left to settle, then the event:
 *
 * - postgres: the server stopped, its data directory made again by `initdb`, started on the same port (every role
 *   gone, a new system identifier);
 * - s3: SeaweedFS stopped, its data directory wiped, started again (every identity gone);
 * - sentinel: the master killed (`kill -9`), a replica promoted by the Sentinels; every consumer must be held on the
 *   new master; then the old master started again empty, as a replica, and healed there.
 *
 * Reported per case: the ms from the server answering (the harness's first successful connection; for the new master,
 * the Sentinels naming it and it saying `role:master`) until every login authenticates, asked by the bench itself (a
 * fresh PostgreSQL connection per role, a signed S3 request per identity, pipelined Redis `AUTH`), sweeping the ones
 * not back yet; the logins written per consumer (the server's own count: PostgreSQL's `log_statement = ddl`,
 * SeaweedFS's `CreateAccessKey`s sent, Redis `ACL SETUSER` calls per node); the engine's CPU per heal; the load.
 * Ends with one line of JSON per case.
 *
 * Options: `--consumers N` (default 1000), `--case` (default all three), `--settle 10s` (after the engine's start),
 * `--give-up 120s`, `--check-timeout 30s` (the default's), `--concurrency 32` (the worker's), `--max-calls N` (the
 * provider's `maxConcurrentCalls`),
 * `--log-level warn` (the engine's log, kept in
 * bench/results), `--cpu-profile <dir>` (the engine writes a V8 CPU profile there as it stops: read its event's window
 * with `cpu-profile-top.ts <file> 30 --window <from-s> <to-s>`).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { parsePostgresVerifier, prepared, sameKeys, scramKeys } from '../../src/adapters/scram.js';
import { ADAPTERS } from '../../src/adapters/registry.js';
import { parseDuration } from '../../src/config/duration.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { HoldfastConfig } from '../../src/config/config.js';
import { postgresLogin, s3Login } from '../backends/logins.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { LocalRedisReplicas, nodeAddress, SENTINEL_MASTER, type NodeAddress } from '../backends/redis-replicas.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';
import { BenchEnv, type BenchConsumer } from './bench-env.js';
import { EngineProcess } from './engine-process.js';
import { writeS3Identities } from './s3-seed.js';
import { seedHeld } from './seed.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const consumers = Number(arg('consumers', '1000'));
const only = arg('case', 'all');
const settleMs = parseDuration(arg('settle', '10s'));
const giveUpMs = parseDuration(arg('give-up', '120s'));
const logLevel = arg('log-level', 'warn') === 'info' ? 'info' : 'warn';
const cpuProfileDir = process.argv.includes('--cpu-profile') ? arg('cpu-profile', '') : undefined;
/** The engine's `worker.concurrency` (default 32). */
const concurrency = Number(arg('concurrency', '32'));
/** The provider's `admin.maxConcurrentCalls` (default: the adapter's). */
const maxCalls = process.argv.includes('--max-calls') ? Number(arg('max-calls', '4')) : undefined;
const PgClient = pg.Client;
/** The interval of the targets; the check's deadline an operator has by default. */
const TIMING = { verifyEvery: '60s', checkTimeout: arg('check-timeout', '30s') };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** The logins among `pending` that authenticate now. */
type Probe = (pending: readonly BenchConsumer[]) => Promise<Set<string>>;

/** Each consumer asked by `one`, `width` at a time; the logins that authenticated. */
function probeEach(width: number, one: (c: BenchConsumer) => Promise<boolean>): Probe {
  return async (pending) => {
    const ok = new Set<string>();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(width, pending.length) }, async () => {
        while (next < pending.length) {
          const c = pending[next++]!;
          if (await one(c).catch(() => false)) ok.add(c.login);
        }
      }),
    );
    return ok;
  };
}

/** Pipelined `AUTH` of each pending login on `node`, on one connection. */
function redisAuth(node: NodeAddress): Probe {
  return async (pending) => {
    const probe = new Redis({ ...node, enableReadyCheck: false, maxRetriesPerRequest: 0, lazyConnect: true });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      const pipeline = probe.pipeline();
      for (const c of pending) pipeline.call('AUTH', c.login, c.password);
      const replies = (await pipeline.exec()) ?? [];
      return new Set(pending.filter((_, i) => replies[i]?.[0] === null).map((c) => c.login));
    } catch {
      return new Set();
    } finally {
      probe.disconnect();
    }
  };
}

/**
 * PostgreSQL's own word, without a login each: the pending roles that can log in with a SCRAM verifier of their
 * password (`pg_authid`, read by the admin; each verifier checked once, PBKDF2 on the thread pool). A login per role
 * forks a backend and runs SCRAM on both sides: 1,000 of them took 20 s a sweep at load 15 (the measure's resolution),
 * so every login is confirmed once at the end instead ({@link confirmLogins}).
 */
function postgresVerifiers(pg: OwnedBackend): Probe {
  const matched = new Map<string, boolean>();
  return async (pending) => {
    const admin = new PgClient({ connectionString: pg.url, connectionTimeoutMillis: 2_000 });
    admin.on('error', () => undefined);
    try {
      await admin.connect();
      const { rows } = await admin.query<{ rolname: string; rolpassword: string | null }>(
        'SELECT rolname, rolpassword FROM pg_authid WHERE rolcanlogin AND rolname = ANY($1)',
        [pending.map((c) => c.login)],
      );
      const password = new Map(pending.map((c) => [c.login, c.password]));
      const ok = new Set<string>();
      for (const { rolname, rolpassword } of rows) {
        const keys = parsePostgresVerifier(rolpassword);
        if (!keys) continue;
        const known = `${rolname}\n${rolpassword}`;
        if (!matched.has(known)) {
          const ours = await scramKeys('sha256', prepared(password.get(rolname)!), keys.salt, keys.iterations);
          matched.set(known, sameKeys(ours, keys));
        }
        if (matched.get(known)) ok.add(rolname);
      }
      return ok;
    } catch {
      return new Set();
    } finally {
      await admin.end().catch(() => undefined);
    }
  };
}

/**
 * The server's own view of the engine's sessions while the roles come back: `pg_stat_activity` of `application_name`
 * holdfast, sampled every 100 ms, counted by state (`active` with its wait event, `idle in transaction`, `idle`). Where
 * the engine's sessions are `idle in transaction` the time is the engine's; `active`, the server's; `idle`, nobody's
 * (nothing sent). Stops when `stop()` is called; the shares of samples per state.
 */
function sampleSessions(pg: OwnedBackend): { stop: () => Promise<Record<string, number>> } {
  const counts = new Map<string, number>();
  let [samples, running] = [0, true];
  const loop = (async () => {
    while (running) {
      const admin = new PgClient({ connectionString: pg.url, connectionTimeoutMillis: 1_000 });
      admin.on('error', () => undefined);
      try {
        await admin.connect();
        while (running) {
          const { rows } = await admin.query<{ state: string; n: number }>(
            "SELECT coalesce(state, '?') || coalesce(' ' || wait_event_type || ':' || wait_event, '') || CASE WHEN state = 'active' THEN ': ' || left(query, 24) ELSE '' END AS state, count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'holdfast' GROUP BY 1",
          );
          samples++;
          for (const { state, n } of rows) counts.set(state, (counts.get(state) ?? 0) + n);
          await sleep(100);
        }
      } catch {
        await sleep(100);
      } finally {
        await admin.end().catch(() => undefined);
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const mean: Record<string, number> = {};
      for (const [state, n] of [...counts].sort((a, b) => b[1] - a[1]))
        mean[state] = Math.round((n / Math.max(1, samples)) * 100) / 100;
      return mean;
    },
  };
}

/** Every consumer's login tried once (a fresh connection each, 16 at a time): the logins refused. */
async function confirmLogins(pg: OwnedBackend, env: BenchEnv): Promise<number> {
  const ok = await probeEach(16, (c) => postgresLogin(pg, c.login, c.password))(env.consumers);
  return env.consumers.length - ok.size;
}

interface Back {
  /** ms from `from` until the last pending login authenticated (undefined: given up). */
  backMs: number | undefined;
  /** Not back when given up. */
  left: number;
  /** Sweeps over the pending logins, and the longest one (the measure's resolution). */
  sweeps: number;
  longestSweepMs: number;
}

/** Sweeps `probe` over the consumers not back yet until every one is, or `giveUpMs` after `from`. */
async function untilAllBack(env: BenchEnv, probe: Probe, from: number): Promise<Back> {
  let pending = [...env.consumers];
  let [sweeps, longestSweepMs] = [0, 0];
  while (pending.length > 0 && Date.now() - from < giveUpMs) {
    const began = Date.now();
    const ok = await probe(pending);
    pending = pending.filter((c) => !ok.has(c.login));
    sweeps++;
    longestSweepMs = Math.max(longestSweepMs, Date.now() - began);
    if (pending.length > 0) await sleep(100);
  }
  return { backMs: pending.length === 0 ? Date.now() - from : undefined, left: pending.length, sweeps, longestSweepMs };
}

/** The contributions (provider `cache`, so `seed.ts` seeds it) with each consumer's `values`. */
function writeContributions(env: BenchEnv, values: (c: BenchConsumer) => string): void {
  const items = env.consumers.map(
    (c) => `  - { id: ${c.id}, login: ${c.login}, secret: ../grants/${c.id}.secret, values: ${values(c)} }`,
  );
  writeFileSync(join(env.dir, 'contributions/cache.yaml'), `consumers:\n${items.join('\n')}\n`);
}

/** `holdfast-<name>.yaml`: the world's queue and store, and one provider `cache` of `adapter` on the event's backend. */
async function writeConfig(
  env: BenchEnv,
  name: string,
  provider: { adapter: string; admin: string[]; password: string; policy: string },
): Promise<{ path: string; config: HoldfastConfig }> {
  const { queue, store } = env;
  writeFileSync(join(env.dir, `secrets/${name}`), provider.password, { mode: 0o600 });
  const path = join(env.dir, `holdfast-${name}.yaml`);
  writeFileSync(
    path,
    [
      `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
      `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
      'fingerprintKeyFile: secrets/fingerprint.key',
      `worker: { concurrency: ${concurrency} }`,
      'log: { level: warn, format: json }',
      `defaults: { ${Object.entries(TIMING)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')} }`,
      'providers:',
      '  - name: cache',
      `    adapter: ${provider.adapter}`,
      `    admin: { ${[...provider.admin, `passwordFile: secrets/${name}`, ...(maxCalls === undefined ? [] : [`maxConcurrentCalls: ${maxCalls}`])].join(', ')} }`,
      '    contributions: contributions/cache.yaml',
      '    secretsRoot: grants',
      `    policy: ${provider.policy}`,
    ].join('\n') + '\n',
  );
  return { path, config: await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } }) };
}

/** How many consumers had their login written 0, 1, 2… times, from the server's count per login. */
function spread(writes: ReadonlyMap<string, number>, env: BenchEnv): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of env.consumers) {
    const n = String(writes.get(c.login) ?? 0);
    counts[n] = (counts[n] ?? 0) + 1;
  }
  return counts;
}

interface EventResult {
  /** Each phase measured: from the server answering until every login authenticates. */
  back: Record<string, Back>;
  /** Logins written during the event, in all. */
  written: number;
  /** Where and how they were written (per node, or how many consumers were written 0, 1, 2… times). */
  writes: Record<string, unknown>;
  /** PostgreSQL: the logins refused when each was tried once after all were seen back (0 expected). */
  refusedAfter?: number;
}

interface CaseResult extends EventResult {
  case: string;
  consumers: number;
  /** The engine's CPU over the window (event to all back), and per login written. */
  engineCpuMs: number;
  engineCpuMsPerHeal: number;
  loadStart: number[];
  loadEnd: number[];
}

/** Seeds the world held, starts `holdfast run`, lets it settle; `event` then runs with the engine's CPU counted. */
async function withEngine(
  env: BenchEnv,
  world: { path: string; config: HoldfastConfig },
  name: string,
  event: (engine: EngineProcess) => Promise<EventResult>,
  seedWith: HoldfastConfig = world.config,
): Promise<CaseResult> {
  const seeded = Date.now();
  await seedHeld(env, seedWith);
  say(`  seeded ${env.consumers.length} held in ${Date.now() - seeded} ms; load ${load()}`);
  const engine = await EngineProcess.start(world.path, 'run', join(env.dir, `engine-${name}.log`), {
    cpuProfileDir,
    logLevel,
  });
  try {
    await sleep(settleMs);
    const loadStart = loadavg();
    const before = await engine.fresh();
    const result = await event(engine);
    const after = await engine.fresh();
    const engineCpuMs = Math.round((after.cpuUs - before.cpuUs) / 1000);
    const engineCpuMsPerHeal = Math.round((engineCpuMs / Math.max(1, result.written)) * 100) / 100;
    return { case: name, consumers, ...result, engineCpuMs, engineCpuMsPerHeal, loadStart, loadEnd: loadavg() };
  } finally {
    await engine.stop();
    // kept beside the results: what the engine said (warnings and errors) through the event
    const results = join(import.meta.dirname, '../../bench/results');
    mkdirSync(results, { recursive: true });
    copyFileSync(join(env.dir, `engine-${name}.log`), join(results, `restart-backends-${name}-engine.log`));
  }
}

/** A write twice would come after the first: the counts are read this long after the last login came back. */
const AFTER_MS = 3_000;

/** PostgreSQL re-initialised: stop, `initdb` again, start on the same port. Its DDL log counts the writes. */
async function postgresCase(env: BenchEnv, pg: OwnedBackend): Promise<CaseResult> {
  writeContributions(env, () => '{ databases: [postgres] }');
  const world = await writeConfig(env, 'postgres', {
    adapter: 'postgres-roles',
    admin: [`url: "postgres://${pg.host}:${pg.port}/postgres"`, `username: ${pg.admin.username}`],
    password: pg.admin.password,
    policy: '{ allowedDatabases: [postgres] }',
  });
  return withEngine(env, world, 'postgres', async () => {
    const logBefore = pg.serverLog!().length;
    await pg.restart({ keepData: false });
    const answered = Date.now();
    say(`  re-initialised, answering at ${new Date(answered).toISOString().slice(11, 23)}; load ${load()}`);
    const sessions = sampleSessions(pg);
    const back = await untilAllBack(env, postgresVerifiers(pg), answered);
    say(`  the engine's sessions until all were back, mean count by state: ${JSON.stringify(await sessions.stop())}`);
    await sleep(AFTER_MS);
    const refused = await confirmLogins(pg, env);
    const writes = new Map<string, number>();
    for (const m of pg.serverLog!()
      .slice(logBefore)
      // a statement each, or several roles in one simple query (new-roles.ts), its statements joined by `;` and a newline
      .matchAll(/(?:statement: |;\n\s*)(?:CREATE|ALTER) ROLE "([^"]+)" WITH/g))
      writes.set(m[1]!, (writes.get(m[1]!) ?? 0) + 1);
    const written = [...writes.values()].reduce((a, b) => a + b, 0);
    return { back: { server: back }, written, writes: { timesWritten: spread(writes, env) }, refusedAfter: refused };
  });
}

/** SeaweedFS recreated empty: stop, wipe its data directory, start. The adapter's `CreateAccessKey` count. */
async function s3Case(env: BenchEnv, s3: OwnedBackend): Promise<CaseResult> {
  writeContributions(env, (c) => `{ buckets: ["${c.id}-data"] }`);
  const world = await writeConfig(env, 's3', {
    adapter: 's3-identities',
    admin: [`url: "http://${s3.host}:${s3.port}"`, `username: ${s3.admin.username}`],
    password: s3.admin.password,
    policy: '{}',
  });
  const seeded = Date.now();
  await writeS3Identities(env, s3, world.config.providers[0]!);
  say(`  ${env.consumers.length} identities written through the filer in ${Date.now() - seeded} ms; load ${load()}`);
  return withEngine(env, world, 's3', async (engine) => {
    const keysBefore = (await engine.fresh()).createAccessKeys;
    await s3.restart({ keepData: false });
    const answered = Date.now();
    say(`  recreated empty, answering; load ${load()}`);
    const login = probeEach(32, (c) => s3Login(s3, 'cache', c.login, c.password));
    const back = await untilAllBack(env, login, answered);
    await sleep(AFTER_MS);
    const written = (await engine.fresh()).createAccessKeys - keysBefore;
    // every identity signing and as many keys created as identities: each once
    return { back: { server: back }, written, writes: { createAccessKey: written } };
  });
}

/** `ACL SETUSER` calls on `node` since its stats were reset (or it started). */
function setUsers(set: LocalRedisReplicas, node: NodeAddress): Promise<number> {
  return set.withNode(node, async (c) => {
    const stats = await c.info('commandstats');
    return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  });
}

/** A Sentinel failover: the master killed, a replica promoted; then the old master back empty as a replica. */
async function sentinelCase(env: BenchEnv): Promise<CaseResult> {
  const set = await LocalRedisReplicas.start(env.run, readSettings(), { replicas: 2, sentinels: 3, downAfterMs: 1000 });
  try {
    writeContributions(env, (c) => `{ keys: ["${c.id}:*"], commands: ["+@read", "+@write", "+@connection"] }`);
    const world = await writeConfig(env, 'sentinel', {
      adapter: 'redis-acl',
      admin: [
        `sentinels: [${set.sentinelUrls.map((u) => `"${u}"`).join(', ')}]`,
        `master: ${SENTINEL_MASTER}`,
        `username: ${set.admin.username}`,
      ],
      password: set.admin.password,
      policy: '{ keyPrefix: "{id}:", allowedCommands: ["+@read", "+@write", "+@connection"] }',
    });
    // seeded through the master named by its address (every node it lists): the same provider, records and logins; a
    // Sentinel-configured adapter knows no node until its first discovery, which a seed's first call does not wait for
    const seedWith = await writeConfig(env, 'sentinel-seed', {
      adapter: 'redis-acl',
      admin: [`url: "${set.url(set.nodes[0]!)}"`, `username: ${set.admin.username}`],
      password: set.admin.password,
      policy: '{ keyPrefix: "{id}:", allowedCommands: ["+@read", "+@write", "+@connection"] }',
    });
    const seeded = (): Promise<CaseResult> =>
      withEngine(
        env,
        world,
        'sentinel',
        async () => {
          const old = await set.currentMaster();
          for (const node of set.nodes) await set.withNode(node, (c) => c.config('RESETSTAT'));
          set.kill(old);
          const promoted = await set.waitForNewMaster(old);
          const promotedAt = Date.now();
          say(`  ${nodeAddress(old)} killed, ${nodeAddress(promoted)} promoted; load ${load()}`);
          const onNew = await untilAllBack(env, redisAuth(promoted), promotedAt);
          await set.restartEmpty(old);
          const answeredAt = Date.now();
          say(`  ${nodeAddress(old)} back empty as a replica; load ${load()}`);
          const onOld = await untilAllBack(env, redisAuth(old), answeredAt);
          await sleep(AFTER_MS);
          // the server counts calls, not logins: every login authenticating and as many calls as logins means once each
          const writes: Record<string, number> = {};
          for (const node of set.nodes) writes[nodeAddress(node)] = await setUsers(set, node);
          const written = Object.values(writes).reduce((a, b) => a + b, 0);
          return {
            back: { newMaster: onNew, oldMasterBackEmpty: onOld },
            written,
            writes: { aclSetuserByNode: writes },
          };
        },
        seedWith.config,
      );
    return await seeded();
  } finally {
    await set.stop();
  }
}

/** One case in a fresh world (its queue, store and consumers), its backend started with it. */
async function runCase(name: string): Promise<CaseResult> {
  say(`\n== ${name}: ${consumers} consumers, verifyEvery ${TIMING.verifyEvery}; load ${load()}`);
  const env = await BenchEnv.create(consumers);
  const settings = readSettings();
  let backend: OwnedBackend | undefined;
  try {
    if (name === 'sentinel') return await sentinelCase(env);
    const docker = await useDocker(settings);
    if (name === 'postgres') {
      backend = await startOwned('postgres', env.run, settings, docker, { postgresSettings: { log_statement: 'ddl' } });
      return await postgresCase(env, backend);
    }
    backend = await startOwned('s3', env.run, settings, docker);
    return await s3Case(env, backend);
  } finally {
    await backend?.stop();
    await env.close();
  }
}

const cases = only === 'all' ? ['postgres', 's3', 'sentinel'] : only.split(',');
for (const name of cases) {
  const result = await runCase(name);
  for (const [phase, b] of Object.entries(result.back))
    say(
      `  ${phase}: ${b.backMs === undefined ? `${b.left} not back after ${giveUpMs} ms` : `every login back ${b.backMs} ms after the server answered`} (${b.sweeps} sweeps, longest ${b.longestSweepMs} ms)`,
    );
  if (result.refusedAfter !== undefined) say(`  logins refused when each was tried once after: ${result.refusedAfter}`);
  say(`  logins written: ${result.written} ${JSON.stringify(result.writes)}`);
  say(`  engine CPU ${result.engineCpuMs} ms, ${result.engineCpuMsPerHeal} ms per login written; load ${load()}`);
  say(JSON.stringify(result));
}
