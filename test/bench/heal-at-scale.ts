/**
 * `npx tsx test/bench/heal-at-scale.ts --consumers 10000 --verify-every 10s`: the incident at
 * scale. N consumers seeded held (FerretDB indexed), `holdfast run` started and left to settle
 * for one interval, then the cache Redis restarted empty (no ACL file). Reports the time from
 * the restart until every login authenticates again (all of them asked by a pipelined `AUTH`
 * every 500 ms), heals per second, and where the engine's time went: the store's round trips
 * per heal (the driver's command monitoring), the adapter's calls, the queue's Redis calls,
 * the jobs in flight (worker concurrency), and the cache's own commands.
 *
 * `--cold`: nothing seeded (the store's collections made and indexed); the engine applies every consumer first (a new
 * provider's cold
 * start), and the time from its start until every login authenticates is reported first.
 *
 * Ends with one line of JSON: consumers, seedMs, allBackMs, healsPerSec, cpuMsPerHeal by process,
 * perHeal (`cost-meter.ts`: engine CPU, store ops, commands, round trips and bytes of the store,
 * the queue's Redis and the cache, everything of the window over the consumers healed), and the
 * load averages at the start and end.
 *
 * `--status-every 5s`: the compiled CLI's `holdfast status` (`npm run build` first) run beside the
 * heal at that pace, each run's wall time and exit code reported.
 *
 * Options: `--consumers N` (default 10000), `--verify-every 10s`, `--check-timeout 5s`,
 * `--concurrency 32`, `--give-up 300s`, `--cold`, `--compiled`, `--cpu-prof <dir>` (the engines' V8 CPU profiles, for
 * `cpu-profile-top.ts`), `--workers N` (`holdfast worker` processes beside `holdfast run`, default 0: their CPU counted
 * with the engine's, per process too).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { parseDuration } from '../../src/config/duration.js';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import { BenchEnv } from './bench-env.js';
import { EngineProcess } from './engine-process.js';
import { CostMeter, countSent, type UnitCost } from './cost-meter.js';
import { costBetween, perCommand, processCpuMs, processMemoryMb, redisCost } from './measure.js';
import { profileBetween, type Profile } from './profile.js';
import { seedHeld } from './seed.js';
import { localPort } from './wire.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1]! : fallback;
};
const consumers = Number(arg('consumers', '10000'));
const verifyEvery = arg('verify-every', '10s');
const checkTimeout = arg('check-timeout', '5s');
const concurrency = Number(arg('concurrency', '32'));
const giveUpMs = parseDuration(arg('give-up', '300s'));
const cold = process.argv.includes('--cold');
/** `--compiled`: the engine runs as plain JavaScript, as the compiled `holdfast run` does (see `engine-process.ts`). */
const compiled = process.argv.includes('--compiled');
const cpuProfileDir = process.argv.includes('--cpu-prof') ? arg('cpu-prof', '') : undefined;
const workers = Number(arg('workers', '0'));
/**
 * `--status-every 5s`: the compiled CLI's `holdfast status` run one after another at this pace from the restart on, as
 * an operator watching would.
 */
const statusEveryMs = process.argv.includes('--status-every') ? parseDuration(arg('status-every', '5s')) : undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (text: string) => process.stdout.write(`${text}\n`);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** The logins among `logins` that authenticate now: one pipeline of `AUTH`s. */
async function authenticating(probe: Redis, logins: ReadonlyMap<string, string>): Promise<string[]> {
  const names = [...logins.keys()];
  const ok: string[] = [];
  for (let i = 0; i < names.length; i += 5000) {
    const batch = names.slice(i, i + 5000);
    const pipeline = probe.pipeline();
    for (const login of batch) pipeline.call('AUTH', login, logins.get(login)!);
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([error], j) => {
      if (error === null) ok.push(batch[j]!);
    });
  }
  return ok;
}

/**
 * `holdfast status` by the compiled CLI (`npm run build` first), one run after another at a pace; each run's wall time
 * and exit code.
 */
class StatusLoop {
  private stopped = false;
  private readonly runs: Array<{ ms: number; code: number | null; startedMs: number; said: string }> = [];
  private readonly loop: Promise<void>;

  /** `startedAt`: the restart (epoch ms), which every run's start is told from, as the probe passes are. */
  constructor(
    configPath: string,
    everyMs: number,
    private readonly startedAt: number,
  ) {
    const cli = join(import.meta.dirname, '../../dist/src/cli/main.js');
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
    this.loop = (async () => {
      while (!this.stopped) {
        const at = Date.now();
        const { code, said } = await new Promise<{ code: number | null; said: string }>((resolve) =>
          execFile(process.execPath, [cli, 'status', '-c', configPath], { maxBuffer: 64 << 20 }, (error, stdout) =>
            resolve({
              code: error ? ((error as { code?: number }).code ?? null) : 0,
              said: stdout.split('\n').slice(0, 4).join(' / '),
            }),
          ),
        );
        this.runs.push({ ms: Date.now() - at, code, startedMs: at - this.startedAt, said });
        await sleep(Math.max(0, everyMs - (Date.now() - at)));
      }
    })();
  }

  async stop(): Promise<Array<{ ms: number; code: number | null; startedMs: number; said: string }>> {
    this.stopped = true;
    await this.loop;
    return this.runs;
  }
}

/**
 * For a status that exited 0 (green): how many logins the first probe pass begun after it answered still found failing
 * (a green verdict over logins that fail); empty otherwise.
 */
function greenOver(
  run: { ms: number; code: number | null; startedMs: number },
  passes: ReadonlyArray<{ atMs: number; failing: number }>,
): string {
  if (run.code !== 0) return '';
  const after = passes.find((p) => p.atMs >= run.startedMs + run.ms);
  return after && after.failing > 0 ? ` [GREEN while ${after.failing} logins failed at +${after.atMs} ms]` : '';
}

/** The store's collections made empty and indexed (`ferretdb-index.ts`), as an operator of a new provider has them. */
async function indexedEmpty(env: BenchEnv, database: string): Promise<void> {
  const client = new MongoClient(env.store.url);
  try {
    for (const name of ['consumers', 'providers']) await client.db(database).createCollection(name);
  } finally {
    await client.close();
  }
  await indexFerretDb(env.store);
}

function table(profile: Profile, heals: number, wallMs: number): void {
  say(
    `  ${'part'.padEnd(34)} ${'calls'.padStart(8)} ${'per heal'.padStart(9)} ${'ms/call'.padStart(8)} ${'busy share'.padStart(10)} ${'max in flight'.padStart(13)}`,
  );
  for (const [name, s] of Object.entries(profile).sort((a, b) => b[1].ms - a[1].ms)) {
    // busy share: the summed time of these calls over the wall time (1.0 = one call in flight throughout)
    say(
      `  ${name.padEnd(34)} ${String(s.calls).padStart(8)} ${(s.calls / heals).toFixed(2).padStart(9)} ${(s.ms / s.calls).toFixed(2).padStart(8)} ${(s.ms / wallMs).toFixed(2).padStart(10)} ${String(s.maxInFlight).padStart(13)}`,
    );
  }
}

/** CPU ms per heal of each process, by label. */
function perHealCpu(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  healed: number,
): Record<string, number> {
  return Object.fromEntries(
    [...after].map(([label, ms]) => [label, Math.round(((ms - before.get(label)!) / Math.max(1, healed)) * 100) / 100]),
  );
}

/** What the heal's window cost per heal, the benchmark's own connections and commands to the cache left out. */
async function perHealCost(
  meter: CostMeter,
  before: Awaited<ReturnType<CostMeter['snapshot']>>,
  own: ReadonlyArray<{ redis: Redis; sent: () => number }>,
  healed: number,
): Promise<UnitCost> {
  for (const o of own) meter.exclude.add(localPort(o.redis));
  meter.ownCacheCalls = own.reduce((n, o) => n + o.sent(), 0);
  return meter.perUnit(meter.between(before, await meter.snapshot()), healed);
}

const loadAtStart = loadavg();
say(
  `heal at scale: ${consumers} consumers, verifyEvery ${verifyEvery}, worker concurrency ${concurrency}; load ${load()}`,
);
const env = await BenchEnv.create(consumers);
try {
  const { path, config } = await env.configure('heal', { verifyEvery, checkTimeout }, concurrency);
  const seededAt = Date.now();
  if (cold) await indexedEmpty(env, config.store.database);
  else await seedHeld(env, config);
  const seedMs = Date.now() - seededAt;
  say(`${cold ? 'nothing seeded' : `seeded in ${Date.now() - seededAt} ms`}; load ${load()}`);
  const verifyMs = config.providers[0]!.timing.verifyEveryMs;
  const startedAt = Date.now();
  const run = await EngineProcess.start(path, 'run', join(env.dir, 'engine-heal.log'), {
    profile: true,
    cpuProfileDir,
    compiled,
  });
  const extra = await Promise.all(
    Array.from({ length: workers }, (_, i) =>
      EngineProcess.start(path, 'worker', join(env.dir, `engine-heal-worker-${i}.log`), { cpuProfileDir, compiled }),
    ),
  );
  const probe = new Redis({
    host: env.cache.host,
    port: env.cache.port,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
  });
  probe.on('error', () => undefined);
  const probeSent = countSent(probe);
  try {
    let coldMs: number | undefined;
    if (cold) {
      const unapplied = new Map(env.consumers.map((c) => [c.login, c.password]));
      while (unapplied.size > 0 && Date.now() - startedAt < giveUpMs) {
        for (const login of await authenticating(probe, unapplied).catch(() => [])) unapplied.delete(login);
        if (unapplied.size > 0) await sleep(500);
      }
      coldMs = Date.now() - startedAt;
      say(
        `cold start: ${consumers - unapplied.size} of ${consumers} authenticating ${coldMs} ms after the engine started (${Math.round((consumers - unapplied.size) / (coldMs / 1000))} first applies/s); load ${load()}`,
      );
      table(profileBetween({}, (await run.fresh()).profile ?? {}), consumers, coldMs);
    }
    await sleep(verifyMs + 5_000);
    const cache = new Redis(env.cache.url, { maxRetriesPerRequest: 0 });
    cache.on('error', () => undefined);
    const cacheSent = countSent(cache);
    say(`settled; load ${load()}`);
    const before = (await run.fresh()).profile ?? {};
    await env.cache.restart();
    const pids = new Map(
      [
        ['engine', run.pid],
        ...extra.map((w, i): [string, number | undefined] => [`worker ${i}`, w.pid]),
        ['store', env.store.pid],
        ['queue Redis', env.queue.pid],
        ['cache Redis', env.cache.pid],
      ].filter((e): e is [string, number] => e[1] !== undefined),
    );
    const cpuBefore = processCpuMs(pids);
    const restarted = Date.now();
    // from the restart on, on the probe passes' clock (not after the meters' first reads, which take a while)
    const statuses = statusEveryMs === undefined ? undefined : new StatusLoop(path, statusEveryMs, restarted);
    const meter = new CostMeter(env, [run, ...extra]);
    const [cacheBefore, meterBefore] = [await redisCost(cache), await meter.snapshot()];
    const [probeBefore, cacheSentBefore] = [probeSent(), cacheSent()];
    const unhealed = new Map(env.consumers.map((c) => [c.login, c.password]));
    const marks: Array<[number, number]> = [];
    // each probe pass: when it began (ms after the restart) and how many logins failed in it
    const passes: Array<{ atMs: number; failing: number }> = [];
    let nextMark = 0.5;
    while (unhealed.size > 0) {
      if (Date.now() - restarted > giveUpMs) break;
      const passAt = Date.now() - restarted;
      const before = unhealed.size;
      for (const login of await authenticating(probe, unhealed).catch(() => [])) unhealed.delete(login);
      passes.push({ atMs: passAt, failing: before - (before - unhealed.size) });
      const share = 1 - unhealed.size / consumers;
      while (share >= nextMark && nextMark <= 1) {
        marks.push([nextMark, Date.now() - restarted]);
        nextMark = nextMark < 0.9 ? 0.9 : nextMark < 1 ? 1 : 2;
      }
      if (unhealed.size > 0) await sleep(500);
    }
    const healMs = Date.now() - restarted;
    const statusRuns = await statuses?.stop();
    if (statusRuns)
      say(
        `holdfast status beside the heal, every ${statusEveryMs} ms:\n${statusRuns.map((r) => `  from +${r.startedMs} ms, ${r.ms} ms, exit ${r.code}: ${r.said}${greenOver(r, passes)}`).join('\n')}`,
      );
    const after = (await run.fresh()).profile ?? {};
    const cpuAfter = processCpuMs(pids);
    const cacheCost = costBetween(cacheBefore, await redisCost(cache));
    const healed = consumers - unhealed.size;
    const own = [
      { redis: probe, sent: () => probeSent() - probeBefore },
      { redis: cache, sent: () => cacheSent() - cacheSentBefore },
    ];
    const perHeal = await perHealCost(meter, meterBefore, own, healed);
    cache.disconnect();
    say(
      `\n${healed} of ${consumers} authenticating again ${healMs} ms after the restart (${marks.map(([s, ms]) => `${s * 100}% at ${ms} ms`).join(', ')}); ${Math.round(healed / (healMs / 1000))} heals/s; load ${load()}`,
    );
    const adapterCreates = perCommand(cacheCost)['acl|setuser']?.calls ?? healed;
    say(`the engine's parts between the restart and the last heal (per heal: per ACL SETUSER, ${adapterCreates}):`);
    table(profileBetween(before, after), adapterCreates, healMs);
    say('the cache Redis, same window:');
    for (const [name, c] of Object.entries(perCommand(cacheCost)))
      say(`  ${name.padEnd(20)} ${String(c.calls).padStart(8)} calls ${c.usPerCall} µs/call`);
    say(`  cache CPU ${Math.round(cacheCost.cpuUs / 1000)} ms over ${healMs} ms`);
    say(
      `CPU per heal by process (ms), same window: ${[...cpuAfter].map(([label, ms]) => `${label} ${((ms - cpuBefore.get(label)!) / Math.max(1, healed)).toFixed(2)}`).join(', ')}`,
    );
    say('per heal, everything of the window (routine checks included) over the consumers healed:');
    for (const [key, value] of Object.entries(perHeal)) say(`  ${key.padEnd(18)} ${JSON.stringify(value)}`);
    const cpuMsPerHeal = perHealCpu(cpuBefore, cpuAfter, healed);
    const memoryMb = Object.fromEntries(processMemoryMb(pids));
    say(
      `memory (MB, now and peak since start): ${Object.entries(memoryMb)
        .map(([label, m]) => `${label} ${m.rss} / ${m.peak}`)
        .join(', ')}`,
    );
    say(
      JSON.stringify({
        consumers,
        verifyEvery,
        concurrency,
        workers,
        compiled,
        ...(coldMs === undefined ? {} : { coldMs }),
        ...(statusRuns ? { statusRuns } : {}),
        seedMs,
        allBackMs: healMs,
        healed,
        healsPerSec: Math.round(healed / (healMs / 1000)),
        marks,
        cpuMsPerHeal,
        perHeal,
        memoryMb,
        loadStart: loadAtStart,
        loadEnd: loadavg(),
      }),
    );
  } finally {
    probe.disconnect();
    await Promise.all([run, ...extra].map((engine) => engine.stop()));
  }
} finally {
  await env.close();
}
