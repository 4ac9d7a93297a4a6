/**
 * The baseline: the seed harness's shape, a plain sequential loop of deep checks (`ACL
 * GETUSER` and compare, through the same adapter), with every password already in memory.
 */
import { Redis } from 'ioredis';
import { connectAdapter, type ProviderConfig } from '../../src/config/config.js';
import type { BenchEnv } from './bench-env.js';
import { checksIn, costBetween, redisCost } from './measure.js';

export interface PlainLoopResult {
  checks: number;
  ms: number;
  checksPerSec: number;
  cpuMsPer1k: number;
  backendUsPerCheck: number;
  /** What one `ACL GETUSER` costs the cache, for projections. */
  getUserUs: number;
}

export async function plainLoop(env: BenchEnv, provider: ProviderConfig, durationMs: number): Promise<PlainLoopResult> {
  const adapter = connectAdapter(provider);
  const admin = new Redis(env.cache.url);
  try {
    const grants = env.consumers.map((c) => ({
      login: c.login,
      password: c.password,
      values: { keys: [`${c.id}:*`], channels: [], commands: ['+@read', '+@write', '+@connection'] },
    }));
    await adapter.holds!(grants[0]!, { signal: AbortSignal.timeout(10_000) }); // connected, the command table read
    const before = await redisCost(admin);
    const cpu = process.cpuUsage();
    const start = performance.now();
    let checks = 0;
    while (performance.now() - start < durationMs) {
      const answer = await adapter.holds!(grants[checks % grants.length]!, { signal: AbortSignal.timeout(10_000) });
      if (!answer.held)
        throw new Error(`the plain loop found ${grants[checks % grants.length]!.login} not held: ${answer.detail}`);
      checks++;
    }
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const cost = costBetween(before, await redisCost(admin));
    const { deep } = checksIn(cost);
    return {
      checks,
      ms,
      checksPerSec: (checks / ms) * 1000,
      cpuMsPer1k: ((used.user + used.system) / 1000 / checks) * 1000,
      backendUsPerCheck: cost.commandUs / checks,
      getUserUs: deep > 0 ? cost.commandUs / deep : NaN,
    };
  } finally {
    await adapter.close();
    admin.disconnect();
  }
}
