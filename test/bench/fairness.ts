/**
 * Fairness between providers (`npm run bench -- --fairness`): provider B (the world's cache, N
 * consumers at a short `verifyEvery`) checked steadily while provider A (`flood`, on a Redis of
 * its own, a contributions file with no consumers) is quiet, then while A's file grows by
 * `FLOOD` new consumers at once: their first applies against B's routine checks, in one
 * process. B's lateness (p50, p99, max: the gap between two checks of a consumer less the wait
 * it asked for, `LatenessSampler`) and its checks done against those asked are measured in both
 * windows of the same run, and given as ratios; A's logins created during the flood window
 * too. B's checks must not come later than their interval while A floods.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { verifyDelay } from '../../machines/delays.js';
import { ADAPTERS } from '../../src/adapters/registry.js';
import type { Timing } from '../../src/config/config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { connectCoordination } from '../../src/engine/engine.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';
import { COMMANDS, type BenchEnv } from './bench-env.js';
import { EngineProcess } from './engine-process.js';
import { LatenessSampler, percentile } from './measure.js';

/** How many consumers provider A's file grows by. */
export const FLOOD = 8_000;
/** Provider B's interval and check deadline. */
const B_TIMING = { verifyEvery: '5s', checkTimeout: '2s' };

export interface FairnessWindow {
  seconds: number;
  lateP50Ms: number;
  lateP99Ms: number;
  lateMaxMs: number;
  /** B's checks seen done in the window, and those its consumers asked for (window / each one's wait). */
  checksDone: number;
  checksExpected: number;
  /** Provider A's logins on its Redis at the window's end. */
  floodLogins: number;
}

export interface FairnessResult {
  consumersB: number;
  flood: number;
  verifyEveryBMs: number;
  quiet: FairnessWindow;
  /** Two windows one after the other from the moment A's file grew: its sync and first applies, then applies alone. */
  flooding: [FairnessWindow, FairnessWindow];
  /** Each flood window's figures over the quiet window's. */
  ratios: Array<{ lateP50: number; lateP99: number; lateMax: number; checksDone: number }>;
  /** Each flood window's p99 lateness over B's interval (above 1: a check came later than a whole interval). */
  p99OverInterval: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs the case in `env` (its consumers are provider B's) for windows of `windowMs` each; `cpuProfileDir`: the engine
 * writes a V8 CPU profile there as it stops (`cpu-profile-top.ts` reads it).
 */
export async function fairness(env: BenchEnv, windowMs = 30_000, cpuProfileDir?: string): Promise<FairnessResult> {
  const settings = readSettings();
  const flood = await startOwned('redis', env.run, settings, await useDocker(settings));
  const path = writeConfig(env, flood);
  const config = await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
  const timing = config.providers.find((p) => p.name === 'cache')!.timing;
  const engine = await EngineProcess.start(path, 'run', join(env.dir, 'engine-fairness.log'), {
    cpuProfileDir,
  });
  const { redis, coordination } = connectCoordination(config);
  const floodAdmin = new Redis(flood.port, flood.host, {
    username: flood.admin.username,
    password: flood.admin.password,
  });
  floodAdmin.on('error', () => undefined);
  try {
    // B's first applies and their deep checks, then routine checks: until an interval's checks are nearly all done
    await sleep(3 * timing.verifyEveryMs);
    const keys = env.consumers.map((c) => c.key);
    for (const started = Date.now(); Date.now() - started < 120_000;) {
      const w = await window(coordination, keys, timing, 2 * timing.verifyEveryMs, floodAdmin);
      if (w.checksDone >= 0.97 * w.checksExpected) break;
    }
    const quiet = await window(coordination, keys, timing, windowMs, floodAdmin);
    writeFlood(env, FLOOD);
    const flooding: [FairnessWindow, FairnessWindow] = [
      await window(coordination, keys, timing, windowMs, floodAdmin),
      await window(coordination, keys, timing, windowMs, floodAdmin),
    ];
    const ratio = (a: number, b: number) => Math.round((a / Math.max(b, 1)) * 100) / 100;
    return {
      consumersB: env.consumers.length,
      flood: FLOOD,
      verifyEveryBMs: timing.verifyEveryMs,
      quiet,
      flooding,
      ratios: flooding.map((f) => ({
        lateP50: ratio(f.lateP50Ms, quiet.lateP50Ms),
        lateP99: ratio(f.lateP99Ms, quiet.lateP99Ms),
        lateMax: ratio(f.lateMaxMs, quiet.lateMaxMs),
        checksDone: ratio(f.checksDone, quiet.checksDone),
      })),
      p99OverInterval: flooding.map((f) => ratio(f.lateP99Ms, timing.verifyEveryMs)),
    };
  } finally {
    floodAdmin.disconnect();
    redis.disconnect();
    await engine.stop();
    await flood.stop();
  }
}

async function window(
  coordination: ConstructorParameters<typeof LatenessSampler>[0],
  keys: readonly string[],
  timing: Timing,
  ms: number,
  floodAdmin: Redis,
): Promise<FairnessWindow> {
  const sampler = new LatenessSampler(coordination, keys, timing);
  const started = Date.now();
  sampler.start(200);
  await sleep(ms);
  sampler.stop();
  const seconds = (Date.now() - started) / 1000;
  const users = (await floodAdmin.call('ACL', 'USERS')) as string[];
  return {
    seconds,
    lateP50Ms: percentile(sampler.lateMs, 50),
    lateP99Ms: percentile(sampler.lateMs, 99),
    lateMaxMs: sampler.lateMs.length === 0 ? NaN : Math.max(...sampler.lateMs),
    checksDone: sampler.lateMs.length,
    checksExpected: Math.round(keys.reduce((n, key) => n + (seconds * 1000) / verifyDelay(key, timing), 0)),
    floodLogins: users.filter((u) => u.startsWith('hfa_')).length,
  };
}

/** Two providers: B, the world's cache at `B_TIMING`; A, `flood`, on its own Redis at the default interval. */
function writeConfig(env: BenchEnv, flood: OwnedBackend): string {
  const { queue, store, cache } = env;
  for (const sub of ['grants-flood']) mkdirSync(join(env.dir, sub), { recursive: true, mode: 0o755 });
  writeFileSync(join(env.dir, 'secrets/flood'), flood.admin.password, { mode: 0o600 });
  writeFileSync(join(env.dir, 'contributions/flood.yaml'), 'consumers: []\n');
  const provider = (name: string, backend: OwnedBackend, grants: string, extra: string[]) => [
    `  - name: ${name}`,
    '    adapter: redis-acl',
    `    admin: { url: "redis://${backend.host}:${backend.port}", username: ${backend.admin.username}, passwordFile: secrets/${name} }`,
    `    contributions: contributions/${name}.yaml`,
    `    secretsRoot: ${grants}`,
    `    policy: { keyPrefix: "{id}:", allowedCommands: ${JSON.stringify(COMMANDS)} }`,
    ...extra,
  ];
  const path = join(env.dir, 'holdfast-fairness.yaml');
  writeFileSync(
    path,
    [
      `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
      `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
      'fingerprintKeyFile: secrets/fingerprint.key',
      'log: { level: warn, format: json }',
      'providers:',
      ...provider('cache', cache, 'grants', [
        `    verifyEvery: ${B_TIMING.verifyEvery}`,
        `    checkTimeout: ${B_TIMING.checkTimeout}`,
      ]),
      ...provider('flood', flood, 'grants-flood', []),
    ].join('\n') + '\n',
  );
  return path;
}

/** Provider A's file grown by `count` consumers at once (each with a grant secret of its own), swapped in whole. */
function writeFlood(env: BenchEnv, count: number): void {
  const items: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `a${String(i).padStart(6, '0')}`;
    writeFileSync(join(env.dir, 'grants-flood', `${id}.secret`), `${randomBytes(18).toString('base64url')}\n`, {
      mode: 0o600,
    });
    items.push(
      `  - id: ${id}\n    login: hfa_${id}\n    secret: ../grants-flood/${id}.secret\n    values: { keys: ["${id}:*"], commands: ${JSON.stringify(COMMANDS)} }`,
    );
  }
  const file = join(env.dir, 'contributions/flood.yaml');
  writeFileSync(`${file}.new`, `consumers:\n${items.join('\n')}\n`);
  renameSync(`${file}.new`, file);
}
