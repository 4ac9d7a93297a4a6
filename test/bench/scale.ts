/**
 * `npm run build && node --max-old-space-size=16000 --import tsx test/bench/scale.ts --consumers 1000,10000,100000,1000000`:
 * for each number of consumers, a world of that many held consumers (seeded in bulk as `seed.ts` does: logins applied
 * by the adapter in batches, records inserted in bulk, the queue's state written directly), then the compiled CLI's
 * `holdfast run` and one `holdfast worker` at `verifyEvery: 60s`, and a steady window after a warm-up: checks per
 * second asked and done, lateness p50 / p99 (`scale-window.ts`), engine CPU per check (run, worker, both), each
 * process's share of a core and resident memory, the queue Redis's `used_memory` per consumer, and what bounds it.
 * Prints a table and a line of JSON per size, and draws the plot (`scale-plot.ts`) into `docs/scaling.svg`, keeping
 * the points of sizes not run this time.
 *
 * Options: `--consumers a,b,…` (default 1000,10000,100000,1000000), `--minutes M` (window, default 3),
 * `--warm-up 60s` (after start-up, before the window), `--concurrency C` (worker concurrency, default 32),
 * `--plot <file>` (default docs/scaling.svg; `none`: no plot), `--cpu-profile <dir>` (both processes write a V8 CPU
 * profile there as they stop, sampled every 10 ms: read it with `cpu-profile-top.ts`, `--window` for the steady part).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { parseDuration } from '../../src/config/duration.js';
import { BenchEnv } from './bench-env.js';
import { CliProcess } from './cli-process.js';
import { writePlot, type ScalePoint } from './scale-plot.js';
import { measureWindow, usedMemoryMb, type WindowFigures } from './scale-window.js';
import { seedHeld } from './seed.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const sizes = arg('consumers', '1000,10000,100000,1000000').split(',').map(Number);
const windowMs = Number(arg('minutes', '3')) * 60_000;
const warmUpMs = parseDuration(arg('warm-up', '60s'));
const concurrency = Number(arg('concurrency', '32'));
const plotFile = arg('plot', join(import.meta.dirname, '../../docs/scaling.svg'));
const profileRoot = arg('cpu-profile', '');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () => loadavg().map((n) => Math.round(n * 100) / 100);
const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

interface SizeResult extends WindowFigures {
  consumers: number;
  askedPerSec: number;
  seedS: number;
  /** Wall time from spawn to running, and the CPU seconds used by then. */
  startS: { run: number; worker: number; runCpu: number; workerCpu: number };
  queueBytesPerConsumer: number;
  bound: string;
}

/**
 * Kept up: at least 97 % of the asked checks done, p99 lateness under 5 s and every sampled consumer checked. Else the
 * process nearest a whole core, or the machine's two cores when the processes together fill them, or the machine's
 * load (other processes' too) when it leaves each a small share, or the engine's pacing when none of these.
 */
function bound(r: Omit<SizeResult, 'bound'>): string {
  const [busiest, share] = Object.entries(r.coreShare).sort((a, b) => b[1] - a[1])[0]!;
  const total = round(
    Object.values(r.coreShare).reduce((a, b) => a + b, 0),
    2,
  );
  const keeps = r.donePerSec >= 0.97 * r.askedPerSec && r.late.p99Ms < 5_000 && r.late.notChecked === 0;
  const kept = keeps
    ? 'keeps up'
    : `does ${round((100 * r.donePerSec) / r.askedPerSec)} % of the asked checks, p99 late ${r.late.p99Ms} ms, ${r.late.notChecked} of ${r.late.sampled} sampled not checked since start-up`;
  if (share >= 0.8) return `${kept}; bound by ${busiest} (${share} of a core; all together ${total} of 2 cores)`;
  if (total >= 1.7) return `${kept}; bound by the machine's 2 cores (all together ${total}; load ${r.load.end[0]})`;
  if (keeps) return `${kept}; no bound reached (busiest: ${busiest}, ${share} of a core; all together ${total})`;
  // more runnable processes than two cores' worth: each of these gets only a share of a core, whatever it asks
  if (r.load.end[0]! > 4)
    return `${kept}; bound by the machine's load (${r.load.end[0]} on 2 cores, others' processes too): ${busiest} got ${share} of a core`;
  return `${kept}; no process near a core (busiest: ${busiest} ${share}): bound by the engine's pacing`;
}

/** Both processes started at once (the worker waits for the run's sweep to fill the due set). */
async function startEngine(env: BenchEnv, path: string, n: number): Promise<{ run: CliProcess; worker: CliProcess }> {
  const profileDir = profileRoot ? join(profileRoot, String(n)) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const settled = await Promise.allSettled(
    (['run', 'worker'] as const).map((role) =>
      CliProcess.start(path, role, join(env.dir, `holdfast-${role}.log`), { cpuProfileDir: profileDir }),
    ),
  );
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return { run: started[0]!, worker: started[1]! };
  await Promise.all(started.map((p) => p.stop()));
  throw failed.reason as Error;
}

async function oneSize(n: number): Promise<SizeResult> {
  say(`\n== ${n.toLocaleString('en')} consumers; load ${load().join(' ')}`);
  let mark = Date.now();
  const env = await BenchEnv.create(n);
  say(`  servers started, grant secrets and contributions written in ${Date.now() - mark} ms`);
  try {
    const queue = new Redis(env.queue.url);
    const emptyMb = await usedMemoryMb(queue).finally(() => queue.disconnect());
    // 158 bytes a consumer in the contributions file: a million are 150 MiB, over the 64 MiB allowed by default
    const { path, config } = await env.configure(
      'scale',
      { verifyEvery: '60s' },
      concurrency,
      undefined,
      'contributionsMaxBytes: 1GiB',
    );
    // the CLI says it is running at level info (what tells the bench its start-up is over)
    writeFileSync(path, readFileSync(path, 'utf8').replace('log: { level: warn,', 'log: { level: info,'));
    mark = Date.now();
    await seedHeld(env, config, (name, ms) => say(`  seed ${name}: ${ms} ms; load ${load().join(' ')}`));
    const seedS = round((Date.now() - mark) / 1000, 1);
    const { run, worker } = await startEngine(env, path, n);
    const since = Date.now();
    try {
      say(
        `  run ready in ${run.startMs} ms (${run.startCpuMs} ms CPU), worker in ${worker.startMs} ms (${worker.startCpuMs} ms CPU); warming up ${warmUpMs / 1000} s`,
      );
      await sleep(warmUpMs);
      const pids = new Map([
        ['run', run.pid],
        ['worker', worker.pid],
        ['store', env.store.pid ?? NaN],
        ['queue Redis', env.queue.pid ?? NaN],
        ['cache Redis', env.cache.pid ?? NaN],
      ]);
      const w = await measureWindow(env, config, pids, { ms: windowMs, since });
      const askedPerSec = round(n / (config.providers[0]!.timing.verifyEveryMs / 1000), 1);
      const queueBytesPerConsumer = Math.round(((w.queueUsedMemoryMb - emptyMb) * 2 ** 20) / n);
      const startS = {
        run: round(run.startMs / 1000, 1),
        worker: round(worker.startMs / 1000, 1),
        runCpu: round(run.startCpuMs / 1000, 1),
        workerCpu: round(worker.startCpuMs / 1000, 1),
      };
      const result = { consumers: n, askedPerSec, seedS, startS, queueBytesPerConsumer, ...w };
      return { ...result, bound: bound(result) };
    } finally {
      await Promise.all([run.stop(), worker.stop()]);
    }
  } finally {
    await env.close();
  }
}

function show(r: SizeResult): void {
  const rows: Array<[string, unknown]> = [
    ['seeded in s', r.seedS],
    [
      'start-up s (CPU s): run; worker',
      `${r.startS.run} (${r.startS.runCpu}); ${r.startS.worker} (${r.startS.workerCpu})`,
    ],
    ['window s', r.seconds],
    ['checks/s asked; done (deep share)', `${r.askedPerSec}; ${r.donePerSec} (${r.deepShare})`],
    [
      'late p50 / p99 ms',
      `${r.late.p50Ms} / ${r.late.p99Ms} (${r.late.samples} gaps of ${r.late.sampled} consumers sampled)`,
    ],
    ['sampled consumers not checked since start-up', r.late.notChecked],
    ['due waits not taken, start / end', `${r.dueNotTaken.start} / ${r.dueNotTaken.end}`],
    [
      'engine CPU ms / check: run, worker, both',
      `${r.cpuMsPerCheck.run}, ${r.cpuMsPerCheck.worker}, ${r.cpuMsPerCheck.engine}`,
    ],
    ['queue Redis commands / check', r.queueCallsPerCheck],
    ...Object.entries(r.coreShare).map(([label, share]): [string, unknown] => [`${label}: share of a core`, share]),
    ...Object.entries(r.memoryMb).map(([label, m]): [string, unknown] => [
      `${label}: RSS MB (peak)`,
      `${m.rss} (${m.peak})`,
    ]),
    ['queue Redis used_memory MB; bytes per consumer', `${r.queueUsedMemoryMb}; ${r.queueBytesPerConsumer}`],
    ['load average, start / end', `${r.load.start.join(' ')} / ${r.load.end.join(' ')}`],
    ['bound', r.bound],
  ];
  say(
    `\nsteady, ${r.consumers.toLocaleString('en')} consumers at verifyEvery 60 s, holdfast run + one holdfast worker`,
  );
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [key, value] of rows) say(`  ${key.padEnd(width)}  ${String(value)}`);
  say(JSON.stringify(r));
}

const pointOf = (r: SizeResult, commit: string): ScalePoint => ({
  consumers: r.consumers,
  askedPerSec: r.askedPerSec,
  donePerSec: r.donePerSec,
  cpuMsPerCheck: r.cpuMsPerCheck,
  lateP99Ms: r.late.p99Ms,
  day: new Date().toISOString().slice(0, 10),
  commit,
});

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
say(
  `scale: ${sizes.map((n) => n.toLocaleString('en')).join(', ')} consumers at ${commit}; window ${windowMs / 60_000} min`,
);
for (const n of sizes) {
  const result = await oneSize(n);
  show(result);
  if (plotFile !== 'none') writePlot(plotFile, [pointOf(result, commit)]);
}
if (plotFile !== 'none') say(`\nplot: ${plotFile}`);
