/**
 * `npm run bench`: holdfast's engine measured against real local servers, apart from the
 * tests, as ratios against a plain baseline measured in the same run. Prints a table per case,
 * writes everything to `bench/results/<time>.json`, and ends with one line of JSON.
 *
 * - throughput: N held consumers, the interval shortened so that checks are always due; checks
 *   per second for `holdfast run` alone and with one more `holdfast worker`, against the seed
 *   harness's plain loop of deep checks and against the fastest hand-written loop (pipelined
 *   `AUTH` over 8 connections, every password in memory: `pipelined-auth.ts`); CPU per 1,000
 *   checks (holdfast, the cache and the queue's Redis), store operations per check, memory;
 * - three nodes (1k, after the 1k throughput case, `verifyEvery` and `checkTimeout` 1 s): the same consumers held
 *   on a Redis primary with two replicas (`replica-nodes.ts`; `admin: { url: <primary> }` with the
 *   default `nodes: discover`, so holdfast finds the replicas in `INFO replication` and holds each
 *   consumer on all three), against one node at the same timing: consumer-checks per second (a consumer
 *   checked on every node is one check; `AUTH`s per second summed over the nodes too), holdfast's
 *   CPU per 1,000 consumer-checks, the Redis cost per check summed over the nodes, and what each
 *   node's `AUTH` costs it. A light check is one `AUTH` per node, on that node's probe connection:
 *   at most `AUTH_IN_FLIGHT` (8) in flight until one has succeeded there, then pipelined by
 *   ioredis (`redis-nodes-adapter.ts`). The one node is measured just before and just after,
 *   and the three nodes are set against the mean of the two (the load drifts between windows).
 *   The last line's `nodes3…` and `oneNode…` fields give it;
 * - breakdown (1k): each part of a routine check measured alone (`check-breakdown.ts`), µs per check;
 * - steady (full run only): 100k consumers at the default 60 s interval: checks per second,
 *   lateness of due checks (p50, p99), costs;
 * - heal: the cache restarts without an ACL file; time until every consumer authenticates
 *   again, less the interval;
 * - rebuild (full run only): the queue's Redis flushed; time until every consumer has a job;
 * - deep check (1k): what one `redis-acl` deep check and one read of a server's command table cost the
 *   server and holdfast, alone and in batches (`deep-check-cost.ts`, run as its own process);
 * - object store: s3-identities consumers on SeaweedFS applied from nothing, then routine checks:
 *   the server's identity writes during the checks (`CreateAccessKey` among them; zero expected),
 *   its request time and CPU per check, and holdfast's.
 *
 * Every window of routine checks and every heal also gives what one check or one heal cost
 * (`cost-meter.ts`): engine CPU ms, store operations, round trips and bytes of the store, the
 * queue's Redis and the cache (read off the kernel's TCP counters, `wire.ts`), and the commands
 * the two Redis ran: `perCheck` and `perHeal` in the last line.
 *
 * `--quick` runs only the 1k throughput, three-node and heal cases and 100 object-store consumers (about five minutes);
 * `--only=<N>` runs
 * the full run's cases for N consumers (1000, 10000 or 100000) alone; `--nodes3[=<N>]` the
 * three-node case alone, for N consumers (default 1000); `--fairness[=<N>]` the fairness case alone
 * (`fairness.ts`: N consumers of one provider checked every 5 s, default 1,000, while another provider's
 * file grows by 8,000 consumers; about three minutes; with `--cpu-profile=<dir>`, the engine's V8 CPU profile there).
 * `--cpu-profile=<dir>` also writes the throughput case's `holdfast run` profile there.
 * `--consumers <N[,M…]> [scale options]`: the scale bench (`scale.ts`) alone, for those sizes (1M included).
 */
import { dueCounts } from '../support/due-set.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { HoldfastConfig } from '../../src/config/config.js';
import { connectCoordination } from '../../src/engine/engine.js';
import { AUTH_IN_FLIGHT } from '../../src/adapters/redis-acl/index.js';
import { BenchEnv, type TimingOverrides } from './bench-env.js';
import { EngineProcess } from './engine-process.js';
import { checkBreakdown, type PartCost } from './check-breakdown.js';
import { countSent, CostMeter, unitRows, type UnitCost } from './cost-meter.js';
import { checksIn, costBetween, LatenessSampler, percentile, perCommand } from './measure.js';
import { fairness, type FairnessResult } from './fairness.js';
import { objectStore, type ObjectStoreResult } from './object-store.js';
import { pipelinedAuth, type PipelinedAuthResult } from './pipelined-auth.js';
import { plainLoop, type PlainLoopResult } from './plain-loop.js';
import { ReplicaNodes } from './replica-nodes.js';
import { seedHeld } from './seed.js';
import { localPort } from './wire.js';

const quick = process.argv.includes('--quick');
/** `--only=100000`: the full run's cases for that many consumers alone. */
const only = Number(/^--only=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--only=')) ?? '')?.[1] ?? NaN);
const wanted = (n: number) => Number.isNaN(only) || only === n;
/**
 * `--nodes3` or `--nodes3=100`: the three-node case (with its one-node windows) alone, for that many consumers (default
 * 1,000).
 */
const nodesOnly = /^--nodes3(?:=(\d+))?$/.exec(process.argv.find((a) => a.startsWith('--nodes3')) ?? '');
/** `--fairness` or `--fairness=300`: the fairness case alone, for that many consumers of provider B (default 1,000). */
const fairnessOnly = /^--fairness(?:=(\d+))?$/.exec(process.argv.find((a) => a.startsWith('--fairness')) ?? '');
const root = join(import.meta.dirname, '../..');
/**
 * `--consumers 1000000` (or `--consumers 1000,1000000`): the scale bench (`scale.ts`) for those sizes alone, on the
 * compiled CLI (`holdfast run` and one `holdfast worker` at `verifyEvery: 60s`: checks/s, lateness, engine RSS, the queue
 * Redis's memory per consumer, what bounds it, and the plot); the options after it are the scale bench's.
 */
if (process.argv.includes('--consumers')) {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  const given = process.argv.slice(process.argv.indexOf('--consumers'));
  execFileSync(
    process.execPath,
    ['--max-old-space-size=16000', '--import', 'tsx', join(import.meta.dirname, 'scale.ts'), ...given],
    { cwd: root, stdio: 'inherit' },
  );
  process.exit(0);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 0) => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null);
const say = (text: string) => process.stdout.write(`${text}\n`);

interface Window {
  seconds: number;
  /** Consumer-checks: a consumer checked on every node of the cache is one check. */
  checksPerSec: number;
  deepShare: number;
  holdfastCpuMsPer1k: number;
  /** The cache's command µs and process CPU per check, summed over its nodes. */
  backendUsPerCheck: number;
  backendCpuMsPer1k: number;
  /** The queue's Redis (BullMQ and holdfast's scripts): command µs and process CPU ms per check. */
  queueUsPerCheck: number;
  queueCpuMsPer1k: number;
  storeOpsPerCheck: number;
  rssMb: number[];
  /** `AUTH`s per second, summed over the cache's nodes. */
  authPerSec: number;
  /** Each node of the cache: its light checks and what each cost it. */
  nodes: NodeWindow[];
  /** The cache's commands in the window (summed over its nodes): calls and µs per call. */
  cacheCommands: Record<string, { calls: number; usPerCall: number }>;
  /**
   * Everything of the window per check: engine CPU, store, queue and cache commands, round trips and bytes
   * (`cost-meter.ts`).
   */
  perCheck: UnitCost;
}

/**
 * The benchmark's own connection to the queue's Redis during a window (a lateness sampler's): left out of its figures.
 */
interface Own {
  sent: () => number;
  port: number;
}

interface NodeWindow {
  node: string;
  authPerSec: number;
  /** Command µs per `AUTH` on this node. */
  usPerAuth: number;
  /** The node's process CPU (everything it did) per `AUTH`, µs. */
  cpuUsPerAuth: number;
  deepChecks: number;
}

/**
 * Measures `ms` of the engines' work on the cache: `caches`, the admin URL of each of its nodes
 * (the world's one-node cache by default). Each check asks every node, so a check is counted
 * once per node's `AUTH` (or `ACL GETUSER`), divided by the nodes.
 */
async function measure(
  env: BenchEnv,
  engines: EngineProcess[],
  ms: number,
  caches: readonly string[] = [env.cache.url],
  own?: Own,
): Promise<Window> {
  const meter = new CostMeter(env, engines, caches);
  if (own) meter.exclude.add(own.port);
  const sentBefore = own?.sent() ?? 0;
  const snapshotBefore = await meter.snapshot();
  await sleep(ms);
  const snapshotAfter = await meter.snapshot();
  meter.ownQueueCalls = (own?.sent() ?? 0) - sentBefore;
  const w = meter.between(snapshotBefore, snapshotAfter);
  const [statsBefore, statsAfter] = [snapshotBefore.engines, snapshotAfter.engines];
  const perNode = caches.map((_, i) => costBetween(snapshotBefore.caches[i]!, snapshotAfter.caches[i]!));
  const [cost, queueCost] = [w.cache, w.queue];
  const { light, deep } = checksIn(cost);
  const checks = (light + deep) / caches.length;
  const seconds = (statsAfter[0]!.at - statsBefore[0]!.at) / 1000;
  const [cpuUs, ops] = [w.engineCpuUs, w.storeOps];
  return {
    seconds,
    checksPerSec: checks / seconds,
    deepShare: deep / Math.max(light + deep, 1),
    holdfastCpuMsPer1k: cpuUs / Math.max(checks, 1),
    backendUsPerCheck: cost.commandUs / Math.max(checks, 1),
    backendCpuMsPer1k: cost.cpuUs / Math.max(checks, 1),
    queueUsPerCheck: queueCost.commandUs / Math.max(checks, 1),
    queueCpuMsPer1k: queueCost.cpuUs / Math.max(checks, 1),
    storeOpsPerCheck: ops / Math.max(checks, 1),
    rssMb: statsAfter.map((s) => s.rss / 1e6),
    authPerSec: light / seconds,
    nodes: perNode.map((c, i) => {
      const auths = Math.max(checksIn(c).light, 1);
      return {
        node: new URL(caches[i]!).host,
        authPerSec: checksIn(c).light / seconds,
        usPerAuth: (c.usec.get('auth') ?? 0) / auths,
        cpuUsPerAuth: c.cpuUs / auths,
        deepChecks: checksIn(c).deep,
      };
    }),
    cacheCommands: perCommand(cost),
    perCheck: meter.perUnit(w, checks),
  };
}

/**
 * Waits (up to three minutes) until two seconds pass in which the engine writes no record and
 * almost every check is light: consumers applied again just before (a heal) get a deep check
 * first, and record what it found.
 */
async function settled(env: BenchEnv, engine: EngineProcess, caches?: readonly string[]): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < 180_000) {
    const window = await measure(env, [engine], 2_000, caches);
    if (window.storeOpsPerCheck === 0 && window.deepShare < 0.02) break;
  }
  return Date.now() - started;
}

/** An interval at which N consumers ask for more checks than one machine can give. */
function saturating(consumers: number): TimingOverrides {
  const ms = Math.max(250, Math.round(consumers / 8)); // 8,000 checks/s asked
  return { verifyEvery: `${ms}ms`, checkTimeout: `${ms}ms` };
}

interface ThroughputResult {
  consumers: number;
  /** How long the engine took to settle (writes done, checks light) before the measure. */
  settleMs: number;
  verifyEvery: string;
  plain: PlainLoopResult;
  /** The harder baseline: pipelined AUTH over 8 connections, every password in memory. */
  pipelined: PipelinedAuthResult;
  run: Window;
  runPlusWorker: Window | null;
  startMs: number;
}

async function throughput(
  env: BenchEnv,
  config: { path: string; config: HoldfastConfig },
  plain: PlainLoopResult,
  pipelined: PipelinedAuthResult,
  withWorker: boolean,
): Promise<ThroughputResult> {
  const n = env.consumers.length;
  const logs = join(env.dir, 'engine');
  // `--cpu-profile=<dir>`: the run's V8 CPU profile there; without a worker (`--quick`), the measured window is the last
  // 15 s before it stops (`cpu-profile-top.ts <file> 40 --window 15 0`)
  const cpuProfileDir = process.argv.find((a) => a.startsWith('--cpu-profile='))?.slice('--cpu-profile='.length);
  const run = await EngineProcess.start(config.path, 'run', `${logs}-run.log`, { cpuProfileDir });
  try {
    const settleMs = await settled(env, run);
    const alone = await measure(env, [run], n >= 50_000 ? 30_000 : 15_000);
    let both: Window | null = null;
    if (withWorker) {
      const worker = await EngineProcess.start(config.path, 'worker', `${logs}-worker.log`);
      try {
        await sleep(5_000);
        both = await measure(env, [run, worker], 15_000);
      } finally {
        await worker.stop();
      }
    }
    return {
      consumers: n,
      settleMs,
      verifyEvery: config.config.providers[0]!.timing.verifyEveryMs + 'ms',
      plain,
      pipelined,
      run: alone,
      runPlusWorker: both,
      startMs: run.startMs,
    };
  } finally {
    await run.stop();
  }
}

interface SteadyResult {
  consumers: number;
  verifyEveryMs: number;
  askedPerSec: number;
  window: Window;
  lateP50Ms: number;
  lateP99Ms: number;
  lateSamples: number;
  startMs: number;
}

async function steady(env: BenchEnv, config: { path: string; config: HoldfastConfig }): Promise<SteadyResult> {
  const timing = config.config.providers[0]!.timing;
  const run = await EngineProcess.start(config.path, 'run', join(env.dir, 'engine-steady.log'));
  const { redis, coordination } = connectCoordination(config.config);
  try {
    // one interval for every job to have run once after start-up, then the measure
    await sleep(timing.verifyEveryMs);
    const sample = env.consumers
      .filter((_, i) => i % Math.max(1, Math.floor(env.consumers.length / 2000)) === 0)
      .map((c) => c.key);
    const sampler = new LatenessSampler(coordination, sample, timing);
    const own = { sent: countSent(redis as Redis), port: -1 };
    sampler.start();
    await sleep(500);
    own.port = localPort(redis as Redis);
    const window = await measure(env, [run], 2 * timing.verifyEveryMs, undefined, own);
    sampler.stop();
    return {
      consumers: env.consumers.length,
      verifyEveryMs: timing.verifyEveryMs,
      askedPerSec: env.consumers.length / (timing.verifyEveryMs / 1000),
      window,
      lateP50Ms: percentile(sampler.lateMs, 50),
      lateP99Ms: percentile(sampler.lateMs, 99),
      lateSamples: sampler.lateMs.length,
      startMs: run.startMs,
    };
  } finally {
    redis.disconnect();
    await run.stop();
  }
}

interface HealResult {
  consumers: number;
  verifyEveryMs: number;
  healMs: number;
  healMinusIntervalMs: number;
  /**
   * Everything from the restart to the last login authenticating, per consumer healed (the routine checks meanwhile
   * included).
   */
  perHeal: UnitCost;
}

/** The heal's probes of the cache, to leave out of its figures: the commands they sent and their connections. */
function probesOwn(meter: CostMeter, clients: readonly Redis[]): () => number {
  const counts = clients.map((c) => countSent(c));
  return () => {
    for (const c of clients) meter.exclude.add(localPort(c));
    return counts.reduce((n, count) => n + count(), 0);
  };
}

async function heal(env: BenchEnv, config: { path: string; config: HoldfastConfig }): Promise<HealResult> {
  const timing = config.config.providers[0]!.timing;
  const run = await EngineProcess.start(config.path, 'run', join(env.dir, 'engine-heal.log'));
  try {
    await sleep(Math.min(timing.verifyEveryMs, 10_000));
    await env.cache.restart();
    const restarted = Date.now();
    const meter = new CostMeter(env, [run]);
    const before = await meter.snapshot();
    const unhealed = new Map(env.consumers.map((c) => [c.login, c.password]));
    // light on the machine: only logins the cache has again are asked to authenticate
    const admin = new Redis(env.cache.url, { maxRetriesPerRequest: 0 });
    const probe = new Redis({
      host: env.cache.host,
      port: env.cache.port,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    for (const client of [admin, probe]) client.on('error', () => undefined);
    const probes = probesOwn(meter, [admin, probe]);
    try {
      while (unhealed.size > 0) {
        if (Date.now() - restarted > 10 * timing.verifyEveryMs + 60_000)
          throw new Error(`${unhealed.size} consumers still not healed`);
        const users = new Set((await admin.call('ACL', 'USERS').catch(() => [])) as string[]);
        await Promise.all(
          [...unhealed]
            .filter(([login]) => users.has(login))
            .map(([login, password]) =>
              probe.call('AUTH', login, password).then(
                () => unhealed.delete(login),
                () => undefined,
              ),
            ),
        );
        if (unhealed.size > 0) await sleep(250);
      }
      const healMs = Date.now() - restarted;
      meter.ownCacheCalls = probes();
      const perHeal = meter.perUnit(meter.between(before, await meter.snapshot()), env.consumers.length);
      return {
        consumers: env.consumers.length,
        verifyEveryMs: timing.verifyEveryMs,
        healMs,
        healMinusIntervalMs: healMs - timing.verifyEveryMs,
        perHeal,
      };
    } finally {
      admin.disconnect();
      probe.disconnect();
    }
  } finally {
    await run.stop();
  }
}

interface RebuildResult {
  consumers: number;
  sentinelEveryMs: number;
  scheduledMs: number;
}

async function rebuild(env: BenchEnv, config: { path: string; config: HoldfastConfig }): Promise<RebuildResult> {
  const run = await EngineProcess.start(config.path, 'run', join(env.dir, 'engine-rebuild.log'));
  const queue = new Queue(config.config.queue.name, {
    connection: { host: env.queue.host, port: env.queue.port, password: env.queue.admin.password },
    prefix: config.config.queue.prefix,
  });
  const redis = new Redis(env.queue.url);
  try {
    await sleep(5_000);
    await redis.flushall();
    const flushed = Date.now();
    for (;;) {
      const counts = await queue.getJobCounts('delayed', 'waiting', 'active', 'prioritized');
      const waits = (await dueCounts(redis, config.config.queue.prefix)).scheduled;
      if (Object.values(counts).reduce((a, b) => a + b, waits) >= env.consumers.length) break;
      if (Date.now() - flushed > 600_000) throw new Error('the queue was not rebuilt within 10 minutes');
      await sleep(100);
    }
    return {
      consumers: env.consumers.length,
      sentinelEveryMs: config.config.sync.sentinelEveryMs,
      scheduledMs: Date.now() - flushed,
    };
  } finally {
    redis.disconnect();
    await queue.close();
    await run.stop();
  }
}

/** One world of N consumers, seeded held; `cases` run in it, in order. */
async function world<T>(n: number, cases: (env: BenchEnv) => Promise<T>): Promise<T> {
  say(`\n== ${n.toLocaleString('en')} consumers: starting servers and seeding`);
  const env = await BenchEnv.create(n);
  try {
    const seedConfig = await env.configure('seed', { verifyEvery: '60s' });
    const t = Date.now();
    await seedHeld(env, seedConfig.config);
    say(`   seeded in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    return await cases(env);
  } finally {
    await env.close();
  }
}

function table(title: string, rows: Array<[string, unknown]>): void {
  say(`\n${title}`);
  const width = Math.max(...rows.map(([k]) => k.length));
  const digits = (n: number) => (Math.abs(n) < 0.1 ? 4 : Math.abs(n) < 10 ? 2 : 0);
  for (const [key, value] of rows)
    say(`  ${key.padEnd(width)}  ${typeof value === 'number' ? round(value, digits(value)) : String(value)}`);
}

function showThroughput(r: ThroughputResult): void {
  const rows: Array<[string, unknown]> = [
    ['interval (saturating)', r.verifyEvery],
    ['plain loop checks/s', r.plain.checksPerSec],
    ['holdfast run checks/s', r.run.checksPerSec],
    ['ratio run / plain', r.run.checksPerSec / r.plain.checksPerSec],
    ['pipelined AUTH loop AUTH/s (8 connections)', r.pipelined.authsPerSec],
    ['ratio run / pipelined', r.run.checksPerSec / r.pipelined.authsPerSec],
    ['pipelined loop CPU ms / 1k AUTHs', r.pipelined.cpuMsPer1k],
    ['run + worker checks/s', r.runPlusWorker?.checksPerSec ?? '-'],
    ['deep share of checks', r.run.deepShare],
    ['holdfast CPU ms / 1k checks', r.run.holdfastCpuMsPer1k],
    ['plain loop CPU ms / 1k checks', r.plain.cpuMsPer1k],
    ['cache µs / check (commands)', r.run.backendUsPerCheck],
    ['cache CPU ms / 1k checks (process)', r.run.backendCpuMsPer1k],
    ['queue Redis µs / check (commands)', r.run.queueUsPerCheck],
    ['queue Redis CPU ms / 1k checks (process)', r.run.queueCpuMsPer1k],
    ['plain loop cache µs / check', r.plain.backendUsPerCheck],
    ['ACL GETUSER µs (cache)', r.plain.getUserUs],
    ['store ops / check', r.run.storeOpsPerCheck],
    ['run RSS MB', r.run.rssMb[0]],
    ['worker RSS MB', r.runPlusWorker?.rssMb[1] ?? '-'],
    ['start-up s', r.startMs / 1000],
    ['settled after s', r.settleMs / 1000],
    ...unitRows('check', r.run.perCheck),
  ];
  table(`throughput, ${r.consumers.toLocaleString('en')} held consumers`, rows);
}

interface NodesResult {
  consumers: number;
  nodes: string[];
  verifyEvery: string;
  checkTimeout: string;
  /** `AUTH`s in flight at most on a node's probe connection while no `AUTH` has succeeded on it. */
  authInFlight: number;
  settleMs: number;
  window: Window;
  /** The one node at the same timing, measured just before and just after. */
  oneNode: Window;
  oneNodeAfter: Window;
}

/**
 * One node's figures: the mean of its windows before and after the three-node case (the machine's load drifts between
 * them).
 */
function oneNodeMean(
  r: NodesResult,
): Pick<Window, 'checksPerSec' | 'holdfastCpuMsPer1k' | 'backendUsPerCheck' | 'backendCpuMsPer1k'> {
  const mean = (pick: (w: Window) => number) => (pick(r.oneNode) + pick(r.oneNodeAfter)) / 2;
  return {
    checksPerSec: mean((w) => w.checksPerSec),
    holdfastCpuMsPer1k: mean((w) => w.holdfastCpuMsPer1k),
    backendUsPerCheck: mean((w) => w.backendUsPerCheck),
    backendCpuMsPer1k: mean((w) => w.backendCpuMsPer1k),
  };
}

/** Starts `holdfast run` on `config`, waits until it settles, and measures `ms` of it. */
async function runWindow(
  env: BenchEnv,
  config: { path: string },
  name: string,
  ms: number,
  caches?: readonly string[],
): Promise<{ settleMs: number; window: Window }> {
  const run = await EngineProcess.start(config.path, 'run', join(env.dir, `engine-${name}.log`));
  try {
    const settleMs = await settled(env, run, caches);
    return { settleMs, window: await measure(env, [run], ms, caches) };
  } finally {
    await run.stop();
  }
}

/**
 * The same consumers held on a primary and two replicas (`admin: { url: <primary> }`, nodes
 * discovered), a check one `AUTH` on each node, against the one node at the same timing just
 * before and just after (the load drifts). 1,000 checks a second are asked (`verifyEvery` and
 * `checkTimeout` 1 ms per consumer, at least 1 s), about what one node does on a loaded 2-core
 * machine, not the throughput case's saturating 250 ms: a node's ping deadline is a third of
 * `checkTimeout` (at least 200 ms), `checkTimeout` is at most `verifyEvery`, and a saturated
 * engine's own event loop answers its pings later than 200 ms, so every node was found not
 * answering at once and the checks in flight abandoned (80 consumer-checks/s at load 11).
 */
async function threeNodes(env: BenchEnv, n: number): Promise<NodesResult> {
  const ms = Math.max(1_000, n);
  const timing: TimingOverrides = { verifyEvery: `${ms}ms`, checkTimeout: `${ms}ms` }; // 1,000 checks/s asked, at most
  const one = await env.configure('one-node', timing);
  const nodes = await ReplicaNodes.start(env, 'nodes3', timing);
  try {
    const before = await runWindow(env, one, 'one-node', 15_000);
    const three = await runWindow(env, nodes.config, 'nodes3', 15_000, nodes.adminUrls);
    const after = await runWindow(env, one, 'one-node-again', 15_000);
    return {
      consumers: env.consumers.length,
      nodes: nodes.names,
      verifyEvery: timing.verifyEvery ?? '-',
      checkTimeout: timing.checkTimeout ?? '-',
      authInFlight: AUTH_IN_FLIGHT,
      settleMs: three.settleMs,
      window: three.window,
      oneNode: before.window,
      oneNodeAfter: after.window,
    };
  } finally {
    await nodes.stop();
  }
}

function showNodes(r: NodesResult): void {
  const { window: w, oneNode: before, oneNodeAfter: after } = r;
  const one = oneNodeMean(r);
  const both = (pick: (x: Window) => number) => `${round(pick(before))} / ${round(pick(after))}`;
  table(
    `three nodes (a primary and two replicas, nodes: discover) against one, ${r.consumers.toLocaleString('en')} held consumers, same run (one node: before / after)`,
    [
      ['verifyEvery, checkTimeout (checks asked: consumers / verifyEvery)', `${r.verifyEvery}, ${r.checkTimeout}`],
      ['one node: checks/s', both((x) => x.checksPerSec)],
      ['three nodes: consumer-checks/s (one AUTH on each node)', w.checksPerSec],
      ['ratio three nodes / one node (mean)', w.checksPerSec / one.checksPerSec],
      ['three nodes: AUTH/s summed over the nodes', w.authPerSec],
      ['one node: holdfast CPU ms / 1k checks', both((x) => x.holdfastCpuMsPer1k)],
      ['three nodes: holdfast CPU ms / 1k consumer-checks', w.holdfastCpuMsPer1k],
      [
        'one node: cache µs / check (commands)',
        `${round(before.backendUsPerCheck, 2)} / ${round(after.backendUsPerCheck, 2)}`,
      ],
      ['three nodes: Redis µs / consumer-check, summed (commands)', w.backendUsPerCheck],
      [
        'one node: cache CPU ms / 1k checks (process)',
        `${round(before.backendCpuMsPer1k, 2)} / ${round(after.backendCpuMsPer1k, 2)}`,
      ],
      ['three nodes: Redis CPU ms / 1k consumer-checks, summed (process)', w.backendCpuMsPer1k],
      ...w.nodes.map((n, i): [string, unknown] => [
        `  ${r.nodes[i] ?? n.node}`,
        `${round(n.authPerSec)} AUTH/s, ${round(n.usPerAuth, 2)} µs / AUTH (command), ${round(n.cpuUsPerAuth, 1)} µs CPU / AUTH, ${n.deepChecks} deep`,
      ]),
      [
        'light check, per node',
        `one AUTH on the node's probe connection; at most ${r.authInFlight} in flight until one succeeded there, then pipelined by ioredis (auto-pipelining)`,
      ],
      ['deep share of checks', w.deepShare],
      ['store ops / check', w.storeOpsPerCheck],
      ['run RSS MB', w.rssMb[0]],
      ['settled after s', r.settleMs / 1000],
    ],
  );
}

/** The summary's figures of the three-node case (one node's: the mean of before and after). */
function nodesSummary(r: NodesResult): Record<string, unknown> {
  const one = oneNodeMean(r);
  return {
    nodes3Consumers: r.consumers,
    nodes3ChecksPerSec: round(r.window.checksPerSec),
    nodes3AuthPerSec: round(r.window.authPerSec),
    oneNodeChecksPerSec: round(one.checksPerSec),
    nodes3RatioToOneNode: round(r.window.checksPerSec / one.checksPerSec, 2),
    nodes3CpuMsPer1k: round(r.window.holdfastCpuMsPer1k),
    oneNodeCpuMsPer1k: round(one.holdfastCpuMsPer1k),
    nodes3BackendUsPerCheck: round(r.window.backendUsPerCheck, 2),
    oneNodeBackendUsPerCheck: round(one.backendUsPerCheck, 2),
    nodes3UsPerAuthPerNode: r.window.nodes.map((n) => round(n.usPerAuth, 2)),
  };
}

/** The cache's cost of a check at the default intervals: one deep check in every deepCheckEvery / verifyEvery. */
function projectedBackendUs(authUs: number, getUserUs: number, config: HoldfastConfig): number {
  const { verifyEveryMs, deepCheckEveryMs } = config.providers[0]!.timing;
  const deepShare = verifyEveryMs / deepCheckEveryMs;
  return (1 - deepShare) * authUs + deepShare * getUserUs;
}

/**
 * The routine check's parts, each alone (`check-breakdown.ts`), on the jobs the throughput case
 * left; printed beside what the engine spent per check in that case.
 */
async function breakdown(
  env: BenchEnv,
  t: ThroughputResult,
): Promise<{ parts: PartCost[]; engineCpuUsPerCheck: number; queueUsPerCheck: number }> {
  const config = await env.configure('breakdown', { verifyEvery: '10s', checkTimeout: '10s' });
  const parts = await checkBreakdown(env, config.config);
  const us = (n: number | null) => (n === null || Number.isNaN(n) ? '-' : String(round(n, Math.abs(n) < 10 ? 1 : 0)));
  say(
    `\nthe routine check's parts, each alone, per check (µs; event loop / process CPU / Redis commands; alone: per second)`,
  );
  const width = Math.max(...parts.map((p) => p.part.length));
  for (const p of parts)
    say(
      `  ${p.part.padEnd(width)}  ${us(p.loopUs).padStart(5)} ${us(p.cpuUs).padStart(5)} ${us(p.serverUs).padStart(5)}  ${us(p.perSec).padStart(7)}/s  batched: ${p.batched}`,
    );
  say(
    `  ${'the engine in the throughput case'.padEnd(width)}  ${''.padStart(5)} ${us(t.run.holdfastCpuMsPer1k).padStart(5)} ${us(t.run.queueUsPerCheck + t.run.backendUsPerCheck).padStart(5)}  ${us(t.run.checksPerSec).padStart(7)}/s`,
  );
  say(
    `  pipelined AUTH, per AUTH: client CPU ${us(t.pipelined.cpuMsPer1k)} µs, cache ${us(t.pipelined.backendUsPerAuth)} µs`,
  );
  return { parts, engineCpuUsPerCheck: t.run.holdfastCpuMsPer1k, queueUsPerCheck: t.run.queueUsPerCheck };
}

const results: Record<string, unknown> = { at: new Date().toISOString(), quick };
let summary: Record<string, unknown> = {};
/** The three-node case's figures, added to the summary of whichever run measured it. */
let nodesFigures: Record<string, unknown> = {};

/** The object store's case: zero access-key churn over routine checks, counted by the server. */
/** The deep check's cost (`deep-check-cost.ts`), in a process of its own so no other case's caches count. */
function deepCheckCase(users: number): string[] {
  const out = execFileSync('npx', ['tsx', join(root, 'test/bench/deep-check-cost.ts'), String(users)], {
    cwd: root,
    encoding: 'utf8',
  });
  const lines = out.trimEnd().split('\n');
  say(`\ndeep check, ${users.toLocaleString('en')} logins\n${lines.join('\n')}`);
  return lines;
}

async function objectStoreCase(n: number, windowMs: number): Promise<ObjectStoreResult> {
  say(
    `\n== ${n.toLocaleString('en')} s3-identities consumers on SeaweedFS: first applies, then ${windowMs / 1000} s of routine checks`,
  );
  const o = await objectStore(n, windowMs);
  table(
    `object store, ${n.toLocaleString('en')} consumers (verifyEvery ${o.verifyEvery}, deepCheckEvery ${o.deepCheckEvery})`,
    [
      ['first applies, until every key signs', `${o.firstApplyMs} ms`],
      ['identity writes (server) in first applies', o.firstApplyIdentityWrites],
      ['routine checks (light / deep)', `${o.lightChecks} / ${o.deepChecks} in ${round(o.windowSeconds, 1)} s`],
      ['CreateAccessKey sent during the checks', o.createAccessKeyDuringChecks],
      ['identity writes (server) during the checks', o.identityWritesDuringChecks],
      ["the server's change-log writes during the checks", o.changeLogWritesDuringChecks],
      ['server request µs / check', o.serverRequestUsPerCheck],
      ['server CPU ms / 1k checks', o.serverCpuMsPer1kChecks],
      ['holdfast CPU ms / 1k checks', o.holdfastCpuMsPer1kChecks],
    ],
  );
  results[`objectStore${n}`] = o;
  return o;
}

function showFairness(r: FairnessResult): void {
  const windows = [r.quiet, ...r.flooding];
  const each = (pick: (w: FairnessResult['quiet']) => unknown) => windows.map((w) => String(pick(w))).join(' / ');
  table(
    `fairness: provider B, ${r.consumersB.toLocaleString('en')} consumers at verifyEvery ${r.verifyEveryBMs} ms, while provider A's file grows by ${r.flood.toLocaleString('en')} (B's figures: quiet / A's first window / A's second window)`,
    [
      ['window s', each((w) => round(w.seconds))],
      ['late p50 ms', each((w) => round(w.lateP50Ms))],
      ['late p99 ms', each((w) => round(w.lateP99Ms))],
      ['late max ms', each((w) => round(w.lateMaxMs))],
      ['checks done/asked', each((w) => `${w.checksDone}/${w.checksExpected}`)],
      ["A's logins at the window's end", each((w) => w.floodLogins)],
      ...r.ratios.map((x, i): [string, unknown] => [
        `ratio flood window ${i + 1} / quiet: late p50, p99, max; checks done`,
        `${x.lateP50}, ${x.lateP99}, ${x.lateMax}; ${x.checksDone}`,
      ]),
      ["flood windows' late p99 / B's interval", r.p99OverInterval.join(' / ')],
    ],
  );
}

if (fairnessOnly) {
  const n = Number(fairnessOnly[1] ?? 1_000);
  say(`\n== fairness: ${n.toLocaleString('en')} consumers of provider B, starting servers`);
  const env = await BenchEnv.create(n);
  try {
    const profileDir = process.argv.find((a) => a.startsWith('--cpu-profile='))?.slice('--cpu-profile='.length);
    const r = await fairness(env, 30_000, profileDir);
    showFairness(r);
    results[`fairness${n}`] = r;
    summary = {
      fairnessConsumersB: n,
      fairnessLateP99Ms: [r.quiet, ...r.flooding].map((w) => w.lateP99Ms),
      fairnessChecksDone: [r.quiet, ...r.flooding].map((w) => w.checksDone),
      fairnessChecksAsked: [r.quiet, ...r.flooding].map((w) => w.checksExpected),
      fairnessRatios: r.ratios,
      fairnessP99OverInterval: r.p99OverInterval,
    };
  } finally {
    await env.close();
  }
} else if (nodesOnly) {
  const n = Number(nodesOnly[1] ?? 1_000);
  await world(n, async (env) => {
    const nodes = await threeNodes(env, n);
    showNodes(nodes);
    results[`nodes3_${n}`] = nodes;
    nodesFigures = nodesSummary(nodes);
  });
} else if (quick) {
  await world(1_000, async (env) => {
    const h = await heal(env, await env.configure('heal', { verifyEvery: '5s', checkTimeout: '2s' }));
    table('heal, 1,000 consumers', [
      ['interval', `${h.verifyEveryMs} ms`],
      ['healed after', `${h.healMs} ms`],
      ['heal − interval', `${h.healMinusIntervalMs} ms`],
      ...unitRows('heal', h.perHeal),
    ]);
    const fast = await env.configure('fast', saturating(1_000));
    const plain = await plainLoop(env, fast.config.providers[0]!, 8_000);
    const pipelined = await pipelinedAuth(env, 5_000);
    const t = await throughput(env, fast, plain, pipelined, false);
    showThroughput(t);
    results.throughput1k = t;
    const nodes = await threeNodes(env, 1_000);
    showNodes(nodes);
    results.nodes3_1k = nodes;
    nodesFigures = nodesSummary(nodes);
    results.breakdown1k = await breakdown(env, t);
    results.heal1k = h;
    const defaults = await env.configure('defaults', {});
    summary = {
      consumers: 1_000,
      checksPerSec: round(t.run.checksPerSec),
      plainLoopChecksPerSec: round(plain.checksPerSec),
      ratio: round(t.run.checksPerSec / plain.checksPerSec, 2),
      pipelinedAuthPerSec: round(pipelined.authsPerSec),
      ratioToPipelined: round(t.run.checksPerSec / pipelined.authsPerSec, 3),
      healMinusIntervalMs: h.healMinusIntervalMs,
      storeOpsPerCheck: round(t.run.storeOpsPerCheck, 4),
      backendUsPerCheck: round(t.run.backendUsPerCheck, 2),
      backendUsPerCheckAtDefaults: round(
        projectedBackendUs(t.run.backendUsPerCheck, plain.getUserUs, defaults.config),
        2,
      ),
      rssMb: round(t.run.rssMb[0]!),
      perCheck: t.run.perCheck,
      perHeal: h.perHeal,
    };
  });
  results.deepCheck1k = deepCheckCase(1_000);
  const o = await objectStoreCase(100, 30_000);
  summary = {
    ...summary,
    s3Consumers: o.consumers,
    s3ChecksInWindow: o.lightChecks + o.deepChecks,
    s3CreateAccessKeyDuringChecks: o.createAccessKeyDuringChecks,
    s3ServerIdentityWritesDuringChecks: o.identityWritesDuringChecks,
    s3ServerChangeLogWritesDuringChecks: o.changeLogWritesDuringChecks,
  };
} else {
  for (const n of [1_000, 10_000].filter(wanted)) {
    await world(n, async (env) => {
      // heal first, while every consumer's checks are spread over the interval as the sweep left them
      const h = await heal(
        env,
        await env.configure('heal', n >= 10_000 ? {} : { verifyEvery: '10s', checkTimeout: '2s' }),
      );
      table(`heal, ${n.toLocaleString('en')} consumers`, [
        ['interval', `${h.verifyEveryMs} ms`],
        ['healed after', `${h.healMs} ms`],
        ['heal − interval', `${h.healMinusIntervalMs} ms`],
        ...unitRows('heal', h.perHeal),
      ]);
      results[`heal${n / 1000}k`] = h;
      const fast = await env.configure('fast', saturating(n));
      const plain = await plainLoop(env, fast.config.providers[0]!, 10_000);
      const pipelined = await pipelinedAuth(env, 5_000);
      const t = await throughput(env, fast, plain, pipelined, true);
      showThroughput(t);
      results[`throughput${n / 1000}k`] = t;
      if (n === 1_000) {
        const nodes = await threeNodes(env, 1_000);
        showNodes(nodes);
        results.nodes3_1k = nodes;
        nodesFigures = nodesSummary(nodes);
        results.breakdown1k = await breakdown(env, t);
      }
      if (n === 10_000) {
        const r = await rebuild(env, await env.configure('rebuild', {}));
        table('rebuild after the queue is flushed, 10,000 consumers', [
          ['sentinelEvery', `${r.sentinelEveryMs} ms`],
          ['all scheduled after', `${r.scheduledMs} ms`],
        ]);
        results.rebuild10k = r;
      }
    });
  }
  if (wanted(1_000)) {
    results.deepCheck1k = deepCheckCase(1_000);
    await objectStoreCase(300, 60_000);
  }
  if (wanted(100_000))
    await world(100_000, async (env) => {
      const defaults = await env.configure('defaults', {});
      const s = await steady(env, defaults);
      table('steady, 100,000 consumers at verifyEvery 60 s', [
        ['asked checks/s', s.askedPerSec],
        ['done checks/s', s.window.checksPerSec],
        ['late p50 ms', s.lateP50Ms],
        ['late p99 ms', s.lateP99Ms],
        ['late samples', s.lateSamples],
        ['deep share of checks', s.window.deepShare],
        ['holdfast CPU ms / 1k checks', s.window.holdfastCpuMsPer1k],
        ['cache µs / check (commands)', s.window.backendUsPerCheck],
        ['store ops / check', s.window.storeOpsPerCheck],
        ['run RSS MB', s.window.rssMb[0]],
        ['start-up s', s.startMs / 1000],
        ...unitRows('check', s.window.perCheck),
      ]);
      results.steady100k = s;
      const auth = s.window.cacheCommands.auth?.usPerCall ?? NaN;
      const getUser = s.window.cacheCommands['acl|getuser']?.usPerCall ?? NaN;
      table(
        "the cache's µs per check at verifyEvery 60 s, by deepCheckEvery (AUTH and ACL GETUSER as measured above)",
        [
          ['AUTH µs', auth],
          ['ACL GETUSER µs', getUser],
          ...[1, 2, 4, 8].map((hours): [string, unknown] => [
            `deepCheckEvery ${hours}h`,
            (1 - 1 / (60 * hours)) * auth + getUser / (60 * hours),
          ]),
        ],
      );
      const fast = await env.configure('fast', saturating(100_000));
      const plain = await plainLoop(env, fast.config.providers[0]!, 10_000);
      const pipelined = await pipelinedAuth(env, 5_000);
      const t = await throughput(env, fast, plain, pipelined, true);
      showThroughput(t);
      results.throughput100k = t;
      summary = {
        consumers: 100_000,
        checksPerSec: round(s.window.checksPerSec),
        saturatedChecksPerSec: round(t.run.checksPerSec),
        plainLoopChecksPerSec: round(plain.checksPerSec),
        ratio: round(t.run.checksPerSec / plain.checksPerSec, 2),
        pipelinedAuthPerSec: round(pipelined.authsPerSec),
        ratioToPipelined: round(t.run.checksPerSec / pipelined.authsPerSec, 3),
        lateP99Ms: s.lateP99Ms,
        healMinusIntervalMs: (results.heal10k as HealResult | undefined)?.healMinusIntervalMs ?? null,
        storeOpsPerCheck: round(s.window.storeOpsPerCheck, 4),
        backendUsPerCheck: round(s.window.backendUsPerCheck, 2),
        rssMb: round(s.window.rssMb[0]!),
        workerRssMb: round(t.runPlusWorker?.rssMb[1] ?? NaN),
        perCheck: s.window.perCheck,
        saturatedPerCheck: t.run.perCheck,
        perHeal: (results.heal10k as HealResult | undefined)?.perHeal ?? null,
      };
    });
}

results.summary = { ...summary, ...nodesFigures };
const dir = join(root, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
say(`\nresults: ${file}`);
say(JSON.stringify(results.summary));
