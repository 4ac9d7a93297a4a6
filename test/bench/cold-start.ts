/**
 * `npx tsx test/bench/cold-start.ts --consumers 100000 [--verify 60s] [--after 120]`: a new
 * provider of N consumers on a fresh store (FerretDB indexed before holdfast first runs on it)
 * and a fresh queue, one `holdfast run`. Reports the time until every consumer is held, until
 * the status is green, the run process's peak RSS (VmHWM) and its RSS at the end, the queue
 * Redis's memory, the jobs waiting `--after` seconds after the last consumer was held, the
 * store's CPU over the run, and the load average beside it (`--cpu-prof <dir>`: the engine's
 * V8 CPU profile; the engine's CPU until it has started (configuration, sweep, the first sync's read of the
 * contributions) is reported apart, as `startCpuMs`; `--workers N`: N − 1 `holdfast worker` processes beside the run, started
 * first, their peak RSS reported apart; `--concurrency N`: the engine's `worker.concurrency`). The CPU each process
 * spent per first apply (engine, store, queue's Redis, from its start until every consumer is held) is reported beside
 * the rate: on a loaded machine the rate says the load, the CPU per apply what the engine costs. Last line: one JSON
 * object.
 */
import { dueCounts } from '../support/due-set.js';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { connectCoordination, connectStore } from '../../src/engine/engine.js';
import { statusConnections } from '../../src/engine/connect.js';
import { STORE_COLLECTIONS } from '../../src/store/consumer-store.js';
import { redReasons, statusReport } from '../../src/status/status-report.js';
import { prepareFerretDbStore } from '../backends/ferretdb-index.js';
import { BenchEnv } from './bench-env.js';
import { EngineProcess } from './engine-process.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const n = Number(arg('consumers', '10000'));
const verifyEvery = arg('verify', '60s');
const afterMs = Number(arg('after', '120')) * 1000;
const limitMs = Number(arg('limit', '1800')) * 1000;
const workers = Number(arg('workers', '1'));
/** `--concurrency N`: the engine's `worker.concurrency` (default 32, the configuration's default). */
const concurrency = Number(arg('concurrency', '32'));
/** `--cpu-prof <dir>`: the engine's V8 CPU profile, written there as it exits (read with `cpu-profile-top.ts`). */
const cpuProfileDir = process.argv.includes('--cpu-prof') ? arg('cpu-prof', '') : undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The due set's counts, named beside BullMQ's job counts. */
const dueWaitCounts = ({ scheduled, due }: { scheduled: number; due: number }) => ({
  'due-set': scheduled,
  'due-set-due': due,
});

/** A value of `/proc/<pid>/status` in kB (`VmHWM`, `VmRSS`). */
function procKb(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN);
}

/** The CPU time (ms) a process used so far (utime + stime of `/proc/<pid>/stat`, at 100 ticks/s). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The process whose command line names `needle` (the FerretDB of this run, by its SQLite directory). */
function pidNaming(needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const env = await BenchEnv.create(n);
say(`${n} consumers written; load ${load()}`);
try {
  const { path, config } = await env.configure('cold', { verifyEvery }, concurrency);
  await prepareFerretDbStore(env.store, config.store.database, Object.values(STORE_COLLECTIONS));
  const ferret = env.store.sqliteDir ? pidNaming(env.store.sqliteDir) : undefined;
  const ferretCpu0 = ferret ? cpuMs(ferret) : NaN;
  const queueRedis = new Redis(env.queue.url);
  const { redis, coordination } = connectCoordination(config);
  const { client, store } = await connectStore(config, { create: false });
  const status = statusConnections(config, 30_000, () => undefined);
  const queue = new Queue(config.queue.name, {
    connection: {
      host: env.queue.host,
      port: env.queue.port,
      username: env.queue.admin.username,
      password: env.queue.admin.password,
    },
    prefix: config.queue.prefix,
  });
  const t0 = Date.now();
  const others = await Promise.all(
    Array.from({ length: workers - 1 }, (_, i) =>
      EngineProcess.start(path, 'worker', join(env.dir, `engine-worker-${i}.log`)),
    ),
  );
  const engine = await EngineProcess.start(path, 'run', join(env.dir, 'engine-run.log'), {
    cpuProfileDir,
    compiled: true,
  });
  const queueCpu = async () => {
    const info = await queueRedis.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
    return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
  };
  const cpu0 = { engine: cpuMs(engine.pid), store: ferret ? cpuMs(ferret) : NaN, queue: await queueCpu() };
  let cpuPerApply: Record<string, number> | null = null;
  const secs = (at: number | null) => (at === null ? null : Math.round((at - t0) / 100) / 10);
  say(
    `started in ${engine.startMs} ms, ${cpu0.engine} ms of the engine's CPU (configuration, sweep, first sync); load ${load()}`,
  );
  let allHeldAt: number | null = null;
  let greenAt: number | null = null;
  let lastStatus = 0;
  let waitingAfter: Record<string, number> | null = null;
  const samples: string[] = [];
  while (Date.now() - t0 < limitMs) {
    await sleep(2_000);
    const held = Object.values((await coordination.notes.allStates()).states).filter((s) =>
      s.startsWith('held '),
    ).length;
    if (allHeldAt === null && held >= n) {
      allHeldAt = Date.now();
      const per = (ms: number) => Math.round((ms / n) * 1000) / 1000;
      cpuPerApply = {
        engine: per(cpuMs(engine.pid) - cpu0.engine),
        store: per((ferret ? cpuMs(ferret) : NaN) - cpu0.store),
        queueRedis: per((await queueCpu()) - cpu0.queue),
      };
      say(
        `all held at t=${secs(allHeldAt)}s (${Math.round(n / ((allHeldAt - t0) / 1000))} first applies/s); CPU ms per first apply: ${JSON.stringify(cpuPerApply)}; load ${load()}`,
      );
    }
    const rss = Math.round(procKb(engine.pid, 'VmRSS') / 1024);
    if (greenAt === null && Date.now() - lastStatus > 10_000) {
      lastStatus = Date.now();
      const report = await statusReport(
        { store, coordination, providers: config.providers, queued: status.queued },
        new Date(),
      );
      if (report.healthy) greenAt = Date.now();
      const counts = {
        ...(await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized')),
        ...dueWaitCounts(await dueCounts(queueRedis, config.queue.prefix)),
      };
      const reasons = redReasons(report);
      const line = `t=${secs(Date.now())}s held ${held}/${n} rss ${rss} MB jobs ${JSON.stringify(counts)} status ${report.healthy ? 'green' : `red: ${reasons.length} reasons, first: ${reasons[0]?.slice(0, 160) ?? ''}`}; load ${load()}`;
      samples.push(line);
      say(line);
    }
    if (allHeldAt !== null && waitingAfter === null && Date.now() - allHeldAt >= afterMs) {
      waitingAfter = {
        ...(await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized')),
        ...dueWaitCounts(await dueCounts(queueRedis, config.queue.prefix)),
      };
      say(`${afterMs / 1000}s after all held: jobs ${JSON.stringify(waitingAfter)}`);
    }
    if (allHeldAt !== null && greenAt !== null && waitingAfter !== null) break;
  }
  const info = await queueRedis.info('memory');
  const usedMemory = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
  const result = {
    consumers: n,
    concurrency,
    verifyEvery,
    startMs: engine.startMs,
    startCpuMs: cpu0.engine,
    allHeldS: secs(allHeldAt),
    appliesPerS: allHeldAt === null ? null : Math.round(n / ((allHeldAt - t0) / 1000)),
    cpuMsPerApply: cpuPerApply,
    greenS: secs(greenAt),
    peakRssMb: Math.round(procKb(engine.pid, 'VmHWM') / 1024),
    ...(others.length > 0
      ? { workers, workerPeakRssMb: others.map((w) => Math.round(procKb(w.pid, 'VmHWM') / 1024)) }
      : {}),
    endRssMb: Math.round(procKb(engine.pid, 'VmRSS') / 1024),
    queueRedisMb: Math.round(usedMemory / 1e5) / 10,
    jobsAfter: waitingAfter,
    storeCpuShare: ferret ? Math.round(((cpuMs(ferret) - ferretCpu0) / (Date.now() - t0)) * 100) / 100 : null,
    load: load(),
  };
  await engine.stop();
  await Promise.all(others.map((w) => w.stop()));
  await queue.close();
  redis.disconnect();
  queueRedis.disconnect();
  await client.close();
  await status.close();
  say(JSON.stringify(result));
} finally {
  await env.close();
}
