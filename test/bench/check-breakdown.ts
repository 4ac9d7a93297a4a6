/**
 * What the engine's routine check is made of, each part measured alone in this process against
 * the bench's own servers, as µs per check: the event loop's busy time (what bounds one worker
 * process, whose checks all run on it), the process's CPU (every thread: a grant secret's read
 * runs in libuv's pool) and the Redis server's command time. Parts:
 *
 * - BullMQ's job: taken (`moveToActive`), put back delayed (`moveToDelayed`) and the next taken,
 *   with a job's real data and the worker's concurrency, doing nothing else;
 * - the consumer's lock: the claim script and the release script (memo, asked);
 * - the grant secret read (`readGrantSecret`), the fingerprint (HMAC-SHA256), the ticket's seal;
 * - `AUTH` through the adapter (one prober connection, as the engine has);
 * - the machine: the ticket decoded, restored, the wait's end and the check's result stepped;
 * - and the whole routine job without BullMQ (`runConsumerJob` with the engine's own parts).
 *
 * Run after the throughput case, on the jobs it left in the queue (real tickets, real seals).
 */
import { performance } from 'node:perf_hooks';
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import type { HoldfastConfig } from '../../src/config/config.js';
import { connectCoordination } from '../../src/engine/connect.js';
import type { Logger } from '../../src/logging/logger.js';
import { Scrubber } from '../../src/logging/scrubber.js';
import { bullConnection } from '../../src/queue/bull-connection.js';
import type { Coordination } from '../../src/queue/coordination.js';
import type { ConsumerJobData } from '../../src/schedule/consumer-queue.js';
import { JobSeal } from '../../src/queue/job-seal.js';
import { secretFingerprint } from '../../src/secrets/fingerprint.js';
import { readGrantSecret } from '../../src/secrets/grant-secret.js';
import { secretRootsOf } from '../../src/secrets/secret-roots.js';
import { runConsumerJob, type JobDeps } from '../../workers/consumer-job.js';
import { createEffects, type Effects } from '../../workers/effects.js';
import { JobTrust } from '../../workers/job-trust.js';
import { ProviderGate } from '../../workers/provider-gate.js';
import { providerRuntime } from '../../workers/provider-runtime.js';
import type { WaitJob } from '../../workers/wait-job.js';
import { persist, restore, samePersisted, step, waitEnded } from '../../machines/machine-step.js';
import { decodeMachine } from '../../src/store/record-codec.js';
import type { ProviderRuntime } from '../../workers/provider-runtime.js';
import type { BenchEnv } from './bench-env.js';
import { costBetween, redisCost } from './measure.js';
import { dueWaitJobs } from '../support/due-set.js';

/** One part's cost per check. */
export interface PartCost {
  part: string;
  /** Event-loop busy µs per check. */
  loopUs: number;
  /** Process CPU µs per check (every thread). */
  cpuUs: number;
  /** Redis command µs per check (the queue's or the cache's, whichever the part uses). */
  serverUs: number | null;
  /** Checks per second the part alone ran at. */
  perSec: number;
  /** What a batched routine check (one job, one lock script and one AUTH pipeline for many consumers) does to it. */
  batched: string;
}

type Timed = Omit<PartCost, 'part' | 'batched'>;

/** Runs `op` `inFlight` at a time until `ms` pass (after a warm-up); `server` is read before and after. */
async function timed(op: (i: number) => unknown, inFlight: number, ms: number, server?: Redis): Promise<Timed> {
  const until = (end: number) =>
    Promise.all(
      Array.from({ length: inFlight }, async (_, lane) => {
        let n = 0;
        for (let i = lane; performance.now() < end; i += inFlight, n++) await op(i);
        return n;
      }),
    );
  await until(performance.now() + 300);
  const before = server ? await redisCost(server) : undefined;
  const loop = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const ops = (await until(start + ms)).reduce((a, b) => a + b, 0);
  const wall = performance.now() - start;
  const busy = performance.eventLoopUtilization(loop).active;
  const used = process.cpuUsage(cpu);
  const serverUs = before && server ? costBetween(before, await redisCost(server)).commandUs / ops : null;
  return { loopUs: (busy * 1000) / ops, cpuUs: (used.user + used.system) / ops, serverUs, perSec: (ops / wall) * 1000 };
}

/** BullMQ alone: `jobs` (the engine's own data) taken and put back due at once, by a worker of `concurrency`. */
async function bullmqCycle(
  config: HoldfastConfig,
  jobs: ConsumerJobData[],
  concurrency: number,
  ms: number,
  server: Redis,
): Promise<Timed> {
  const name = 'breakdown';
  const { prefix } = config.queue;
  const bull = bullConnection(config.queue.connection);
  const queue = new Queue<ConsumerJobData>(name, { connection: bull.connection, prefix });
  const put = new DelayedError();
  let taken = 0;
  const worker = new Worker<ConsumerJobData>(
    name,
    async (job: Job<ConsumerJobData>, token?: string) => {
      taken++;
      await job.moveToDelayed(Date.now(), token);
      throw put;
    },
    { connection: bull.connection, prefix, concurrency, autorun: false },
  );
  try {
    await queue.addBulk(
      jobs.map((data, i) => ({
        name: `${data.key} timer`,
        data,
        opts: { jobId: `breakdown-${i}`, removeOnComplete: true },
      })),
    );
    void worker.run();
    await new Promise((r) => setTimeout(r, 1000));
    const before = await redisCost(server);
    const loop = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const from = taken;
    await new Promise((r) => setTimeout(r, ms));
    const ops = taken - from;
    const wall = performance.now() - start;
    const busy = performance.eventLoopUtilization(loop).active;
    const used = process.cpuUsage(cpu);
    const serverUs = costBetween(before, await redisCost(server)).commandUs / ops;
    return {
      loopUs: (busy * 1000) / ops,
      cpuUs: (used.user + used.system) / ops,
      serverUs,
      perSec: (ops / wall) * 1000,
    };
  } finally {
    await worker.close(true);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    bull.end();
  }
}

/** The waits the throughput case left in the due set, as their wait jobs: real tickets under the real seal. */
async function leftJobs(config: HoldfastConfig, env: BenchEnv): Promise<WaitJob[]> {
  const redis = new Redis(env.queue.url);
  try {
    return await dueWaitJobs(redis, config.queue.prefix, 5000);
  } finally {
    redis.disconnect();
  }
}

/**
 * What the whole routine job needs: the engine's own parts, no store (a routine check that finds a consumer held reads
 * none).
 */
function jobDeps(
  config: HoldfastConfig,
  coordination: Coordination,
  logger: Logger,
): { deps: JobDeps; effects: Effects; strays: { count: number }; close: () => Promise<void> } {
  const gate = new ProviderGate(coordination.signals);
  const now = () => new Date();
  const effects = createEffects({ fingerprintKey: config.fingerprintKey, gate, scrubber: new Scrubber(), now });
  const providers = new Map(config.providers.map((p) => [p.name, providerRuntime(p)]));
  // a check that went further than a routine one (its deadline passed on a loaded machine): counted, and the job ends
  // absent
  const strays = { count: 0 };
  const stray =
    <T>(value: T) =>
    () => {
      strays.count++;
      return Promise.resolve(value);
    };
  const deps: JobDeps = {
    store: { get: stray(null), insert: stray(undefined), save: stray(0), delete: stray(undefined) },
    waits: { scheduleWaits: stray(undefined) },
    coordination,
    effects,
    providers,
    trust: new JobTrust(new JobSeal(config.fingerprintKey), logger),
    logger,
    now,
  };
  return {
    deps,
    effects,
    strays,
    close: async () => void (await Promise.allSettled([...providers.values()].map((p) => p.adapter.close()))),
  };
}

const ROWS: Array<[string, string]> = [
  ['BullMQ job (take, put back delayed)', 'one job per batch: ÷ batch size'],
  ['lock: claim + release scripts', 'one script per batch: round trip ÷ batch; Lua per consumer stays'],
  ['grant secret read (file)', 'stays, per consumer (read at every check)'],
  ['fingerprint (HMAC-SHA256)', 'stays, per consumer'],
  ['AUTH through the adapter', "pipelined: → the pipelined loop's client cost"],
  ['machine: decode, restore, 2 steps', 'stays, per consumer'],
  ['ticket seal check', 'stays per consumer (each ticket sealed), or ÷ batch size if a batch is sealed whole'],
  ['whole routine job without BullMQ', '-'],
];

/** Each part of a routine check, measured alone; the table's rows in {@link ROWS} order. */
export async function checkBreakdown(env: BenchEnv, config: HoldfastConfig, ms = 3_000): Promise<PartCost[]> {
  const provider = config.providers[0]!;
  const concurrency = config.worker.concurrency;
  const jobs = await leftJobs(config, env);
  if (jobs.length === 0)
    throw new Error('the breakdown needs the waits the throughput case leaves in the due set; none found');
  const queueRedis = new Redis(env.queue.url);
  const cacheRedis = new Redis(env.cache.url);
  const { redis, coordination } = connectCoordination(config);
  const logger = pino({ level: 'silent' });
  const { deps, effects, strays, close } = jobDeps(config, coordination, logger);
  const runtime = deps.providers.get(provider.name)!;
  const roots = secretRootsOf(provider);
  const seal = new JobSeal(config.fingerprintKey);
  const password = (i: number) => env.consumers[i % env.consumers.length]!.password;
  const grant = (i: number) => ({
    login: env.consumers[i % env.consumers.length]!.login,
    password: password(i),
    values: {},
  });
  const job = (i: number) => jobs[i % jobs.length]!;
  const held: Effects = { ...effects, check: () => Promise.resolve({ event: { type: 'HELD' }, deep: false }) };
  try {
    const parts: Timed[] = [];
    parts.push(await bullmqCycle(config, jobs, concurrency, ms, queueRedis));
    parts.push(
      await timed(
        async (i) => {
          const { key } = job(i);
          const claim = await coordination.locks.claim(key, 'breakdown', 10_000);
          if (!claim) throw new Error(`${key} is locked`);
          const asked = Date.now();
          await coordination.locks.release(key, provider.name, 'breakdown', claim.memo ?? undefined, 'asked', asked);
        },
        concurrency,
        ms,
        queueRedis,
      ),
    );
    parts.push(await timed((i) => readGrantSecret(job(i).ticket.spec.secretPath, roots), concurrency, ms));
    parts.push(await timed((i) => secretFingerprint(config.fingerprintKey, password(i)), 1, ms));
    parts.push(
      await timed(
        (i) => runtime.adapter.authenticates!(grant(i), { signal: AbortSignal.timeout(10_000) }),
        concurrency,
        ms,
        cacheRedis,
      ),
    );
    parts.push(await timed((i) => machinePart(job(i), runtime, held), 1, ms));
    parts.push(await timed((i) => seal.sealsTicket(job(i)) || fail('a left job is not sealed'), 1, ms));
    parts.push(await timed((i) => runConsumerJob(job(i), deps), concurrency, ms, queueRedis));
    const rows = parts.map((p, i) => ({ part: ROWS[i]![0], batched: ROWS[i]![1], ...p }));
    if (strays.count > 0)
      rows[rows.length - 1]!.batched = `${strays.count} job(s) went past the routine check (read the record)`;
    return [...rows.slice(0, -1), glue(rows), rows[rows.length - 1]!];
  } finally {
    await close();
    redis.disconnect();
    queueRedis.disconnect();
    cacheRedis.disconnect();
  }
}

/**
 * The machine's part of a routine check, as the run takes it on the ticket: the ticket decoded, restored, the wait's
 * end stepped, the check (`held`, a stand-in that answers at once) and its result stepped, compared with the ticket.
 */
async function machinePart(job: WaitJob, runtime: ProviderRuntime, held: Effects): Promise<boolean> {
  const read = decodeMachine(job.ticket.machine);
  if (!('consumer' in read)) throw new Error(`${job.key}: its ticket cannot be read`);
  const ticketed = restore(runtime.machine, read.consumer);
  const ended = step(runtime.machine, ticketed, waitEnded(job.wait, ticketed.value));
  const { spec, appliedAt } = job.ticket;
  const input = { key: job.key, provider: runtime, spec, context: ended.snapshot.context, appliedAt, memo: null };
  const result = await held.check(input);
  const answer = step(runtime.machine, ended.snapshot, result.event);
  return samePersisted(persist(answer.snapshot), read.consumer);
}

/**
 * The whole job less its parts alone: deadlines (an AbortController and a timer per check), promises, the memo, the
 * gate.
 */
function glue(rows: PartCost[]): PartCost {
  const whole = rows[rows.length - 1]!;
  const parts = rows.slice(1, -1); // not BullMQ: the whole job runs without it
  const less = (pick: (p: PartCost) => number | null) =>
    (pick(whole) ?? 0) - parts.reduce((sum, p) => sum + (pick(p) ?? 0), 0);
  return {
    part: 'the rest (whole job less the parts above)',
    loopUs: less((p) => p.loopUs),
    cpuUs: less((p) => p.cpuUs),
    serverUs: less((p) => p.serverUs),
    perSec: NaN,
    batched: 'mostly ÷ batch size (one deadline, one promise chain per batch)',
  };
}

function fail(why: string): never {
  throw new Error(why);
}
