/**
 * `npm run example`: holdfast on the example in this folder, against real servers it starts
 * (a cache Redis, a ledger PostgreSQL, an object store SeaweedFS, the queue's Redis, and a
 * MongoDB wire server that is both the record store and the catalog), then the incident it
 * exists for: the cache restarts without an ACL file and forgets every consumer; holdfast
 * notices at the next check and applies them again. Then a ledger role is dropped by hand, and
 * the object store is recreated on an empty data directory; each comes back the same way.
 *
 * It waits until every declared consumer is held (not merely a green status), prints the
 * dashboard's URL (holdfast run --http), and never prints an admin password: it points at the
 * files that hold them. `--once` stops after the demonstration (CI runs it so); otherwise it
 * keeps running, and serving the dashboard, until Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { parseDocument } from 'yaml';
import { freePort } from '../test/backends/ports.js';
import { prettyLines } from '../src/logging/pretty-line.js';
import { STORE_COLLECTIONS } from '../src/store/consumer-store.js';
import { indexFerretDb, prepareFerretDbStore } from '../test/backends/ferretdb-index.js';
import { postgresLogin, redisLogin, s3Login } from '../test/backends/logins.js';
import { startOwned, useDocker } from '../test/backends/provision.js';
import { createRunDir, instanceDir, reapRunDir } from '../test/backends/run-dir.js';
import { readSettings } from '../test/backends/settings.js';
import type { OwnedBackend } from '../test/backends/types.js';

const once = process.argv.includes('--once');
const here = import.meta.dirname;
const main = join(here, '../src/cli/main.ts');

const say = (text: string) => process.stdout.write(`\n\x1b[1m▶ ${text}\x1b[0m\n`);

/**
 * `holdfast` with the given arguments; `shown`: its output goes to this terminal, its log lines (JSON, its stdout being
 * a pipe) shown as `holdfast run` shows them on a terminal, each as it comes, inert (`src/logging/pretty-line.ts`).
 */
function holdfast(args: string[], shown = false): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], {
    stdio: shown ? ['ignore', 'pipe', 'inherit'] : 'pipe',
  });
  if (shown) {
    const pretty = prettyLines({ colorize: process.stdout.isTTY === true });
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) =>
      process.stdout.write(pretty(line)),
    );
  }
  return child;
}

/**
 * Turns `done` once holdfast's log says its dashboard listens on `port` (its own line, not another program's answer
 * there).
 */
function dashboardServed(child: ChildProcess, port: number): { done: boolean } {
  const served = { done: false };
  const said = `dashboard at http://127.0.0.1:${port}/`;
  let tail = '';
  const onData = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4_096);
    if (!tail.includes(said)) return;
    served.done = true;
    child.stdout!.off('data', onData);
  };
  child.stdout!.on('data', onData);
  return served;
}

function status(config: string, ...more: string[]): { code: number; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'status', '-c', config, ...more], {
    encoding: 'utf8',
  });
  return { code: r.status ?? 2, output: `${r.stdout}${r.stderr}` };
}

/** Every one of the example's consumers has a record and is held (a green status over nothing is not enough). */
function everyDeclaredHeld(config: string): boolean {
  const { code, output } = status(config, '--json', '--all');
  if (code !== 0) return false;
  try {
    const report = JSON.parse(output) as {
      providers: Array<{ declared: number | null }>;
      consumers: Array<{ state: string }>;
    };
    // what the contributions declare, every one with a record, and every one held
    const declared = report.providers.reduce((n, p) => (p.declared === null ? NaN : n + p.declared), 0);
    return report.consumers.length === declared && report.consumers.every((c) => c.state === 'held');
  } catch {
    return false;
  }
}

/** The dashboard's port: 9100 when free, else any free one. */
function dashboardPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(freePort()));
    probe.listen(9100, '127.0.0.1', () => probe.close(() => resolve(9100)));
  });
}

/** holdfast run exited while the example waited on it. */
class EngineExited extends Error {}

async function until(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!(await predicate())) {
    if (engine && engine.exitCode !== null)
      throw new EngineExited(`holdfast run exited (code ${engine.exitCode}) while waiting for ${what}`);
    if (Date.now() - start > timeoutMs) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return Date.now() - start;
}

function canLogin(cache: OwnedBackend, login: string, password: string): Promise<boolean> {
  return redisLogin(cache, login, password).catch(() => false);
}

const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const servers: OwnedBackend[] = [];
let engine: ChildProcess | undefined;

async function cleanUp(): Promise<void> {
  if (engine && engine.exitCode === null) {
    engine.kill('SIGTERM');
    await new Promise((r) => engine?.once('exit', r));
  }
  await Promise.allSettled(servers.map((s) => s.stop()));
  await reapRunDir(run);
}

try {
  say('starting a cache Redis, a ledger PostgreSQL, an object store, the queue Redis and a MongoDB wire server');
  const docker = await useDocker(settings);
  const [cache, queue, store, ledger, assets] = await Promise.all([
    startOwned('redis', run, settings, docker),
    startOwned('redis', run, settings, docker),
    startOwned('mongodb', run, settings, docker),
    startOwned('postgres', run, settings, docker),
    startOwned('s3', run, settings, docker),
  ]);
  servers.push(cache, queue, store, ledger, assets);
  console.log(
    `cache ${cache.flavor} on ${cache.port}, ledger ${ledger.flavor} on ${ledger.port}, assets ${assets.flavor} on ${assets.port}, queue ${queue.flavor} on ${queue.port}, store and catalog ${store.flavor} on ${store.port}`,
  );

  // the example, copied where its files may have the modes a grant secret should have
  const dir = instanceDir(run, 'example');
  cpSync(here, dir, { recursive: true, filter: (src) => !src.endsWith('.ts') });
  for (const name of [
    'cache/photos',
    'cache/billing',
    'cache/search',
    'ledger/billing',
    'ledger/reports',
    'catalog/photos',
    'catalog/search',
    'assets/photos',
    'assets/reports',
  ]) {
    chmodSync(join(dir, 'grants', `${name}.secret`), 0o600);
  }
  mkdirSync(join(dir, 'secrets'), { mode: 0o700 });
  writeFileSync(join(dir, 'secrets/queue-admin'), queue.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/store-admin'), store.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/cache-admin'), cache.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/ledger-admin'), ledger.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/catalog-admin'), store.admin.password, { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/assets-admin'), assets.admin.password, { mode: 0o600 });
  const configPath = join(dir, 'holdfast.yaml');
  const config = parseDocument(readFileSync(configPath, 'utf8'));
  config.setIn(['queue', 'url'], `redis://${queue.host}:${queue.port}`);
  config.setIn(['store', 'url'], `mongodb://${store.host}:${store.port}/?authSource=admin`);
  config.setIn(['providers', 0, 'admin', 'url'], `redis://${cache.host}:${cache.port}`);
  config.setIn(['providers', 1, 'admin', 'url'], `postgres://${ledger.host}:${ledger.port}/postgres`);
  config.setIn(['providers', 2, 'admin', 'url'], `mongodb://${store.host}:${store.port}/?authSource=admin`);
  config.setIn(['providers', 3, 'admin', 'url'], `http://${assets.host}:${assets.port}`);
  config.setIn(['providers', 3, 'admin', 'username'], assets.admin.username); // the admin's access key id, made at start
  writeFileSync(configPath, config.toString());

  // FerretDB's SQLite handler finds `_id` by index only with this (see docs/operating.md, "The store's index"): there
  // before holdfast first runs
  await prepareFerretDbStore(store, 'holdfast', Object.values(STORE_COLLECTIONS));
  let port = await dashboardPort();
  for (let attempt = 1; ; attempt++) {
    say(`holdfast run -c ${configPath} --http 127.0.0.1:${port}`);
    engine = holdfast(['run', '-c', configPath, '--http', `127.0.0.1:${port}`], true);
    const serving = dashboardServed(engine, port);
    try {
      await until('every declared consumer held', () => everyDeclaredHeld(configPath), 60_000);
      await until('the dashboard served', () => serving.done, 60_000);
      break;
    } catch (error) {
      // the dashboard's port found free and taken by another program before holdfast listened: started again on another
      if (!(error instanceof EngineExited) || attempt === 3) throw error;
      port = await freePort();
    }
  }
  const dashboard = `http://127.0.0.1:${port}/`;
  await indexFerretDb(store); // FerretDB's SQLite handler finds `_id` by index only with this (see docs/operating.md, "The store's index")
  say('holdfast status');
  console.log(status(configPath).output);
  say(`every declared consumer held; the dashboard: ${dashboard}`);

  const consumers = ['photos', 'billing', 'search'].map((id) => ({
    login: `app_${id}`,
    password: readFileSync(join(dir, 'grants/cache', `${id}.secret`), 'utf8').trim(),
  }));
  for (const c of consumers)
    console.log(`${c.login} logs in to the cache: ${await canLogin(cache, c.login, c.password)}`);

  say('the incident: the cache restarts without an ACL file and forgets every consumer');
  await cache.restart();
  const restarted = Date.now();
  for (const c of consumers)
    console.log(`${c.login} logs in to the cache: ${await canLogin(cache, c.login, c.password)}`);
  await until(
    'every consumer logs in again',
    async () => (await Promise.all(consumers.map((c) => canLogin(cache, c.login, c.password)))).every(Boolean),
    60_000,
  );
  say(
    `healed ${((Date.now() - restarted) / 1000).toFixed(1)} s after the restart (verifyEvery 5 s): every consumer logs in again`,
  );
  await until('every declared consumer held again', () => everyDeclaredHeld(configPath), 60_000);
  console.log(status(configPath).output);
  say(`dashboard: ${dashboard}   (queue: ${dashboard}queues, ${dashboard}healthz, ${dashboard}metrics)`);

  say('someone drops the ledger role app_reports by hand');
  const reports = readFileSync(join(dir, 'grants/ledger', 'reports.secret'), 'utf8').trim();
  const ledgerLogin = () => postgresLogin(ledger, 'app_reports', reports).catch(() => false);
  const pgAdmin = new pg.Client({
    host: ledger.host,
    port: ledger.port,
    user: ledger.admin.username,
    password: ledger.admin.password,
    database: 'postgres',
  });
  await pgAdmin.connect();
  await pgAdmin.query('DROP OWNED BY app_reports; DROP ROLE app_reports');
  await pgAdmin.end();
  const dropped = Date.now();
  console.log(`app_reports logs in to the ledger: ${await ledgerLogin()}`);
  await until('app_reports logs in again', ledgerLogin, 60_000);
  say(`healed ${((Date.now() - dropped) / 1000).toFixed(1)} s after the drop: app_reports logs in to the ledger again`);
  await until('status healthy', () => status(configPath).code === 0, 60_000);

  say('the object store is recreated on an empty data directory: its IAM users and keys are gone');
  const assetsConsumers = ['photos', 'reports'].map((id) => ({
    login: `app_${id}`,
    secret: readFileSync(join(dir, 'grants/assets', `${id}.secret`), 'utf8').trim(),
  }));
  const signs = (c: { login: string; secret: string }) =>
    s3Login(assets, 'assets', c.login, c.secret).catch(() => false);
  for (const c of assetsConsumers) console.log(`${c.login} signs a request to the object store: ${await signs(c)}`);
  await assets.restart({ keepData: false });
  const recreated = Date.now();
  for (const c of assetsConsumers) console.log(`${c.login} signs a request to the object store: ${await signs(c)}`);
  await until(
    'every assets consumer signs again',
    async () => (await Promise.all(assetsConsumers.map(signs))).every(Boolean),
    60_000,
  );
  say(
    `healed ${((Date.now() - recreated) / 1000).toFixed(1)} s after the object store came back empty: every assets consumer's signed request works again`,
  );
  await until('every declared consumer held again', () => everyDeclaredHeld(configPath), 60_000);
  console.log(status(configPath).output);

  if (once) {
    say('done (--once): stopping holdfast and the servers');
  } else {
    say('holdfast keeps running; try, in another terminal:');
    console.log(`  open ${dashboard} in a browser                      # refreshes itself every 5 s`);
    console.log(
      `  redis-cli -p ${cache.port} --user default --pass "$(cat ${join(dir, 'secrets/cache-admin')})" ACL DELUSER app_photos   # healed at the next check`,
    );
    console.log(`  edit ${join(dir, 'contributions/cache.yaml')}   # picked up without a restart`);
    console.log(`  npx tsx src/cli/main.ts status -c ${configPath}`);
    console.log('Ctrl-C stops holdfast, the dashboard and the servers.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  }
} catch (error) {
  process.stderr.write(`example failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
