/**
 * The harder baseline: the fastest hand-written loop of light checks. Every password already in
 * memory, `AUTH` as each consumer pipelined over {@link CONNECTIONS} connections to the cache, in
 * batches of {@link BATCH}, nothing else: no job, no lock, no file, no record. What a check can
 * cost at the least on this machine, against the same Redis and the same users as holdfast.
 */
import { Redis } from 'ioredis';
import type { BenchEnv } from './bench-env.js';
import { costBetween, redisCost } from './measure.js';

export const CONNECTIONS = 8;
export const BATCH = 256;

export interface PipelinedAuthResult {
  connections: number;
  batch: number;
  auths: number;
  ms: number;
  authsPerSec: number;
  /** CPU of this (the client's) process per 1,000 AUTHs. */
  cpuMsPer1k: number;
  /** The cache's command time per AUTH. */
  backendUsPerAuth: number;
  /** The cache's process CPU per 1,000 AUTHs. */
  backendCpuMsPer1k: number;
}

/** One connection's loop: a batch of AUTHs pipelined, every reply checked, until `until`. */
async function authLoop(connection: Redis, env: BenchEnv, offset: number, until: number): Promise<number> {
  const { consumers } = env;
  let done = 0;
  let next = offset;
  while (performance.now() < until) {
    const pipeline = connection.pipeline();
    for (let i = 0; i < BATCH; i++) {
      const c = consumers[next++ % consumers.length]!;
      pipeline.call('AUTH', c.login, c.password);
    }
    const replies = (await pipeline.exec()) ?? [];
    const refused = replies.find(([error]) => error !== null);
    if (refused) throw new Error(`the pipelined AUTH loop was refused: ${String(refused[0])}`);
    done += replies.length;
  }
  return done;
}

export async function pipelinedAuth(env: BenchEnv, durationMs: number): Promise<PipelinedAuthResult> {
  const connections = Array.from(
    { length: CONNECTIONS },
    () => new Redis({ host: env.cache.host, port: env.cache.port, enableReadyCheck: false, maxRetriesPerRequest: 0 }),
  );
  const admin = new Redis(env.cache.url);
  try {
    const spread = Math.floor(env.consumers.length / CONNECTIONS);
    await Promise.all(connections.map((c, i) => authLoop(c, env, i * spread, performance.now() + 500))); // warmed
    const before = await redisCost(admin);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const counts = await Promise.all(connections.map((c, i) => authLoop(c, env, i * spread, start + durationMs)));
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const cost = costBetween(before, await redisCost(admin));
    const auths = counts.reduce((a, b) => a + b, 0);
    return {
      connections: CONNECTIONS,
      batch: BATCH,
      auths,
      ms,
      authsPerSec: (auths / ms) * 1000,
      cpuMsPer1k: (used.user + used.system) / auths,
      backendUsPerAuth: (cost.usec.get('auth') ?? 0) / auths,
      backendCpuMsPer1k: cost.cpuUs / auths,
    };
  } finally {
    for (const c of connections) c.disconnect();
    admin.disconnect();
  }
}
