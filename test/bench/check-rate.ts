/**
 * `npx tsx test/bench/check-rate.ts [consumers] [verifyEvery] [--cpu-profile=<dir>] [--window=<s>] [--compiled]`:
 * the routine check's rate alone, for working on it: N held consumers (default 1,000) checked every
 * `verifyEvery` (default 250ms, the quick bench's; `checkTimeout` the same), `holdfast run` alone measured for a
 * window (default 15 s) after it settles, against the pipelined `AUTH` loop measured in the same world just
 * before. Prints checks/s, the ratio to the pipelined loop, the rate the interval asks for (N / verifyEvery: a
 * rate near it is bound by the interval, not by the engine) and everything one check cost (`cost-meter.ts`).
 * With `--cpu-profile=<dir>` the run's V8 CPU profile is written there as it stops: its last window is the
 * measured one (`cpu-profile-top.ts <file> 40 --window <s> 0`). `--compiled`: the engine runs as plain
 * JavaScript, as the compiled `holdfast run` does (under tsx, every function made inside another is also named
 * at run time: a cost the operator's process does not have).
 */
import { join } from 'node:path';
import { parseDuration } from '../../src/config/duration.js';
import { BenchEnv } from './bench-env.js';
import { CostMeter, unitRows } from './cost-meter.js';
import { EngineProcess } from './engine-process.js';
import { checksIn } from './measure.js';
import { pipelinedAuth } from './pipelined-auth.js';
import { seedHeld } from './seed.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const [consumersArg, everyArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const consumers = Number(consumersArg ?? 1_000);
const every = everyArg ?? '250ms';
const windowMs = Number(flag('window') ?? 15) * 1000;
const cpuProfileDir = flag('cpu-profile');
const compiled = process.argv.includes('--compiled');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);

/** Checks per second and what one cost, over `ms` of the engine's work. */
async function window(env: BenchEnv, run: EngineProcess, ms: number) {
  const meter = new CostMeter(env, [run]);
  const before = await meter.snapshot();
  await sleep(ms);
  const after = await meter.snapshot();
  const w = meter.between(before, after);
  const { light, deep } = checksIn(w.cache);
  const checks = light + deep;
  return { checks, deep, seconds: w.seconds, perSec: checks / w.seconds, perCheck: meter.perUnit(w, checks) };
}

const env = await BenchEnv.create(consumers);
try {
  await seedHeld(env, (await env.configure('seed', { verifyEvery: '60s' })).config);
  const fast = await env.configure('fast', { verifyEvery: every, checkTimeout: every });
  const pipelined = await pipelinedAuth(env, 5_000);
  const run = await EngineProcess.start(fast.path, 'run', join(env.dir, 'engine-run.log'), { cpuProfileDir, compiled });
  try {
    for (let i = 0; i < 90; i++) {
      const w = await window(env, run, 2_000);
      if (w.perCheck.storeOps === 0 && w.deep / Math.max(w.checks, 1) < 0.02) break;
    }
    const w = await window(env, run, windowMs);
    const asked = consumers / (parseDuration(every) / 1000);
    say(`consumers ${consumers}, verifyEvery ${every}: the interval asks ${Math.round(asked)} checks/s`);
    say(`pipelined AUTH loop      ${Math.round(pipelined.authsPerSec)} AUTH/s`);
    say(`holdfast run             ${Math.round(w.perSec)} checks/s (${w.checks} in ${w.seconds.toFixed(1)} s)`);
    say(`ratio to pipelined       ${((w.perSec / pipelined.authsPerSec) * 100).toFixed(2)} %`);
    say(`share of the asked rate  ${((w.perSec / asked) * 100).toFixed(1)} %`);
    for (const [k, v] of unitRows('check', w.perCheck)) say(`${k.padEnd(52)} ${v}`);
    say(`${'run RSS MB'.padEnd(52)} ${Math.round((await run.fresh()).rss / 1e6)}`);
  } finally {
    await run.stop();
  }
} finally {
  await env.close();
}
