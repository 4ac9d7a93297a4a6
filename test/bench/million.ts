/**
 * `npx tsx test/bench/million.ts [--consumers 1000000] [--minutes 3]`: a seeded world of N held
 * consumers (records written in bulk, as `seed.ts` does), one `holdfast run` at `verifyEvery:
 * 60s`, and a steady window of `--minutes` after one interval of warm-up: checks per second
 * (asked and done), lateness of due checks (p50, p99: `LatenessSampler` on 2,000 consumers), the
 * due waits not yet taken at the window's start and end, the resident memory of each process
 * (engine, store, queue Redis, cache Redis), the queue Redis's `used_memory`, each process's
 * share of a core, and what a check cost (`cost-meter.ts`). Names what bounds it: the process
 * nearest a whole core, or the engine's lateness with no process busy. Prints a table and one
 * line of JSON; the load averages at the start and end of the window are in it.
 *
 * Lateness is the gap between two checks of a consumer less its interval: the first check after
 * start-up counts from the seeded last check, so while the due waits not taken stay high (the
 * engine never caught up) it holds the start-up and the backlog, not a steady state.
 *
 * Options: `--consumers N` (default 1000000), `--minutes M` (default 3), `--concurrency C`
 * (worker concurrency, default 32), `--warm-up 60s` (after start-up, before the window).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { parseDuration } from '../../src/config/duration.js';
import { connectCoordination } from '../../src/engine/engine.js';
import { dueCounts } from '../support/due-set.js';
import { BenchEnv } from './bench-env.js';
import { CostMeter, countSent, unitRows, type UnitCost } from './cost-meter.js';
import { EngineProcess } from './engine-process.js';
import { checksIn, LatenessSampler, percentile, processCpuMs, processMemoryMb } from './measure.js';
import { seedHeld } from './seed.js';
import { localPort } from './wire.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const consumers = Number(arg('consumers', '1000000'));
const windowMs = Number(arg('minutes', '3')) * 60_000;
const concurrency = Number(arg('concurrency', '32'));
const warmUpMs = parseDuration(arg('warm-up', '60s'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () => loadavg().map((n) => Math.round(n * 100) / 100);
const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

interface Steady {
  seconds: number;
  checksPerSec: number;
  deepShare: number;
  lateP50Ms: number;
  lateP99Ms: number;
  lateSamples: number;
  dueNotTaken: { start: number; end: number };
  /** Each process's CPU over the window, in cores (1 = one core busy throughout). */
  coreShare: Record<string, number>;
  memoryMb: Record<string, { rss: number; peak: number }>;
  queueUsedMemoryMb: { start: number; end: number };
  perCheck: UnitCost;
  load: { start: number[]; end: number[] };
}

async function usedMemoryMb(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return round(Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN) / 2 ** 20, 1);
}

/** Each process's share of a core between two readings of its CPU time. */
function coreShares(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  ms: number,
): Record<string, number> {
  return Object.fromEntries([...after].map(([label, used]) => [label, round((used - before.get(label)!) / ms, 2)]));
}

/**
 * What bounds it: kept up (at least 97% of the asked checks done, p99 lateness under 5 s) with no
 * process near a core, nothing yet; else the process nearest a whole core, or the machine's two
 * cores when all four together fill them, or the engine's own pacing when neither.
 */
function bound(s: Steady, asked: number): string {
  const [busiest, share] = Object.entries(s.coreShare).sort((a, b) => b[1] - a[1])[0]!;
  const total = round(
    Object.values(s.coreShare).reduce((a, b) => a + b, 0),
    2,
  );
  const keeps = s.checksPerSec >= 0.97 * asked && s.lateP99Ms < 5_000;
  const kept = keeps
    ? 'keeps up with the asked checks'
    : `does ${round((100 * s.checksPerSec) / asked)}% of the asked checks, p99 late ${s.lateP99Ms} ms`;
  if (share >= 0.8)
    return `${kept}; bound by the ${busiest} process (${share} of a core; the four together ${total} of the machine's 2 cores)`;
  if (total >= 1.7)
    return `${kept}; bound by the machine's 2 cores (the four processes together ${total} cores; load ${s.load.end[0]})`;
  if (keeps) return `${kept}; no bound reached (busiest: ${busiest}, ${share} of a core; the four together ${total})`;
  return `${kept}; no process near a core (busiest: ${busiest} ${share}): bound by the engine's pacing (worker concurrency ${concurrency}, due rounds)`;
}

async function steady(
  env: BenchEnv,
  run: EngineProcess,
  config: Awaited<ReturnType<BenchEnv['configure']>>['config'],
): Promise<Steady> {
  const timing = config.providers[0]!.timing;
  const pids = new Map(
    [
      ['engine', run.pid],
      ['store', env.store.pid],
      ['queue Redis', env.queue.pid],
      ['cache Redis', env.cache.pid],
    ].filter((e): e is [string, number] => e[1] !== undefined),
  );
  const queue = new Redis(env.queue.url);
  const { redis, coordination } = connectCoordination(config);
  const sent = countSent(redis as Redis);
  const step = Math.max(1, Math.floor(consumers / 2000));
  const sampler = new LatenessSampler(
    coordination,
    env.consumers.filter((_, i) => i % step === 0).map((c) => c.key),
    timing,
  );
  try {
    const meter = new CostMeter(env, [run]);
    sampler.start(5_000);
    await sleep(1_000);
    meter.exclude.add(localPort(redis as Redis));
    meter.exclude.add(localPort(queue));
    const start = {
      load: load(),
      cpu: processCpuMs(pids),
      memory: await usedMemoryMb(queue),
      due: (await dueCounts(queue, config.queue.prefix)).due,
      sent: sent(),
      snapshot: await meter.snapshot(),
    };
    await sleep(windowMs);
    const snapshot = await meter.snapshot();
    const end = {
      load: load(),
      cpu: processCpuMs(pids),
      memory: await usedMemoryMb(queue),
      due: (await dueCounts(queue, config.queue.prefix)).due,
      sent: sent(),
    };
    meter.ownQueueCalls = end.sent - start.sent;
    const w = meter.between(start.snapshot, snapshot);
    const { light, deep } = checksIn(w.cache);
    return {
      seconds: w.seconds,
      checksPerSec: round((light + deep) / w.seconds),
      deepShare: round(deep / Math.max(1, light + deep), 4),
      lateP50Ms: percentile(sampler.lateMs, 50),
      lateP99Ms: percentile(sampler.lateMs, 99),
      lateSamples: sampler.lateMs.length,
      dueNotTaken: { start: start.due, end: end.due },
      coreShare: coreShares(start.cpu, end.cpu, w.seconds * 1000),
      memoryMb: Object.fromEntries(processMemoryMb(pids)),
      queueUsedMemoryMb: { start: start.memory, end: end.memory },
      perCheck: meter.perUnit(w, light + deep),
      load: { start: start.load, end: end.load },
    };
  } finally {
    sampler.stop();
    redis.disconnect();
    queue.disconnect();
  }
}

function show(s: Steady, asked: number, startMs: number, seedMs: number): void {
  const rows: Array<[string, unknown]> = [
    ['seeded in s', round(seedMs / 1000, 1)],
    ['engine start-up s', round(startMs / 1000, 1)],
    ['window s', round(s.seconds)],
    ['asked checks/s (consumers / 60 s)', round(asked)],
    ['done checks/s', s.checksPerSec],
    ['deep share', s.deepShare],
    ['late p50 / p99 ms', `${s.lateP50Ms} / ${s.lateP99Ms} (${s.lateSamples} samples)`],
    ['due waits not taken, start / end', `${s.dueNotTaken.start} / ${s.dueNotTaken.end}`],
    ...Object.entries(s.coreShare).map(([label, share]): [string, unknown] => [`${label}: share of a core`, share]),
    ...Object.entries(s.memoryMb).map(([label, m]): [string, unknown] => [
      `${label}: RSS MB (peak)`,
      `${m.rss} (${m.peak})`,
    ]),
    ['queue Redis used_memory MB, start / end', `${s.queueUsedMemoryMb.start} / ${s.queueUsedMemoryMb.end}`],
    ['load average, start / end', `${s.load.start.join(' ')} / ${s.load.end.join(' ')}`],
    ...unitRows('check', s.perCheck),
    ['bound', bound(s, asked)],
  ];
  say(`\nsteady, ${consumers.toLocaleString('en')} consumers at verifyEvery 60 s`);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [key, value] of rows) say(`  ${key.padEnd(width)}  ${String(value)}`);
}

say(`million: ${consumers.toLocaleString('en')} consumers, window ${windowMs / 60_000} min; load ${load().join(' ')}`);
let mark = Date.now();
const env = await BenchEnv.create(consumers);
say(`servers started, grant secrets and contributions written in ${Date.now() - mark} ms`);
try {
  // 158 bytes a consumer in the contributions file: a million are 150 MiB, over the 64 MiB allowed by default
  const { path, config } = await env.configure(
    'million',
    { verifyEvery: '60s' },
    concurrency,
    undefined,
    'contributionsMaxBytes: 1GiB',
  );
  mark = Date.now();
  await seedHeld(env, config, (name, ms) =>
    say(`  seed ${name}: ${ms} ms (${Math.round((consumers / Math.max(ms, 1)) * 1000)}/s); load ${load().join(' ')}`),
  );
  const seedMs = Date.now() - mark;
  say(`seeded in ${seedMs} ms (${Math.round((consumers / seedMs) * 1000)} consumers/s); load ${load().join(' ')}`);
  const run = await EngineProcess.start(path, 'run', join(env.dir, 'engine-million.log'));
  try {
    say(`engine started in ${run.startMs} ms; warming up ${warmUpMs / 1000} s`);
    await sleep(warmUpMs);
    const asked = consumers / (config.providers[0]!.timing.verifyEveryMs / 1000);
    const s = await steady(env, run, config);
    show(s, asked, run.startMs, seedMs);
    say(
      JSON.stringify({
        consumers,
        verifyEvery: '60s',
        concurrency,
        seedMs,
        startMs: run.startMs,
        askedPerSec: round(asked),
        ...s,
        bound: bound(s, asked),
      }),
    );
  } finally {
    await run.stop();
  }
} finally {
  await env.close();
}
