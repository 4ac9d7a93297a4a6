/**
 * `npx tsx test/bench/compare-throughput.ts <checkout> [<checkout>…]`: the bench's 1k saturating
 * throughput case (1,000 held consumers, `verifyEvery: 250ms`) in each checkout given, in the
 * order given (name one twice to interleave: a b a b), each with its own bench code and engine,
 * in a fresh world of its own. One JSON line each: checks/s, holdfast's CPU ms per 1,000 checks,
 * RSS, the heap as sampled and as a full GC leaves it, and the load average. For telling a
 * change's cost from the machine's load: compare checkouts within one run, not across runs.
 */
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';

interface Stats {
  at: number;
  cpuUs: number;
  rss: number;
  store: { reads: number; writes: number };
}
interface Heap {
  heapUsed: number;
  heapTotal: number;
  kept: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The engine child of `root`, with the heap report loaded. */
async function startEngine(root: string, configPath: string, logFile: string) {
  const child = fork(join(root, 'test/bench/engine-child.ts'), [configPath, 'run', logFile], {
    execArgv: ['--import', 'tsx', '--expose-gc', '--import', join(import.meta.dirname, 'child-heap.ts')],
    stdio: 'inherit',
  });
  let stats: Stats | undefined;
  let heap: Heap | undefined;
  const ready = new Promise<void>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`the engine of ${root} exited (${code}); see ${logFile}`)));
    child.on('message', (m: { type: string }) => {
      if (m.type === 'ready') done();
      if (m.type === 'stats') stats = m as unknown as Stats;
      if (m.type === 'heap') heap = m as unknown as Heap;
    });
  });
  await ready;
  const fresh = async (): Promise<Stats> => {
    const since = Date.now();
    while (!stats || stats.at < since) await sleep(50);
    return stats;
  };
  const stop = async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.send('stop');
    await exited;
  };
  return { fresh, stop, heap: () => heap };
}

interface BenchModules {
  BenchEnv: {
    create(n: number): Promise<{
      cache: { url: string };
      dir: string;
      configure(name: string, t: Record<string, string>): Promise<{ path: string; config: unknown }>;
      close(): Promise<void>;
    }>;
  };
  seedHeld(env: unknown, config: unknown): Promise<void>;
  checksIn(cost: unknown): { light: number; deep: number };
  costBetween(a: unknown, b: unknown): unknown;
  redisCost(redis: Redis): Promise<unknown>;
}

async function modulesOf(root: string): Promise<BenchModules> {
  const at = (file: string) => import(join(root, 'test/bench', file)) as Promise<Record<string, unknown>>;
  return {
    ...(await at('bench-env.ts')),
    ...(await at('seed.ts')),
    ...(await at('measure.ts')),
  } as unknown as BenchModules;
}

async function measureIn(root: string): Promise<Record<string, unknown>> {
  const m = await modulesOf(root);
  const env = await m.BenchEnv.create(1_000);
  try {
    await m.seedHeld(env, (await env.configure('seed', { verifyEvery: '60s' })).config);
    const fast = await env.configure('fast', { verifyEvery: '250ms', checkTimeout: '250ms' });
    const engine = await startEngine(root, fast.path, join(env.dir, 'engine-run.log'));
    const cache = new Redis(env.cache.url);
    try {
      const window = async (ms: number) => {
        const [b, sb] = await Promise.all([m.redisCost(cache), engine.fresh()]);
        await sleep(ms);
        const [a, sa] = await Promise.all([m.redisCost(cache), engine.fresh()]);
        const { light, deep } = m.checksIn(m.costBetween(b, a));
        const checks = Math.max(light + deep, 1);
        const ops = sa.store.reads + sa.store.writes - sb.store.reads - sb.store.writes;
        return {
          checksPerSec: Math.round(checks / ((sa.at - sb.at) / 1000)),
          cpuMsPer1k: Math.round((sa.cpuUs - sb.cpuUs) / checks),
          deepShare: deep / checks,
          storeOpsPerCheck: ops / checks,
          rssMb: Math.round(sa.rss / 1e6),
        };
      };
      // settled as the bench waits: no store operation, almost every check light
      for (let i = 0; i < 90; i++) {
        const w = await window(2_000);
        if (w.storeOpsPerCheck === 0 && w.deepShare < 0.02) break;
      }
      const w = await window(15_000);
      const heap = engine.heap();
      const mb = (n: number | null | undefined) => (typeof n === 'number' ? Math.round(n / 1e6) : null);
      return {
        root,
        ...w,
        heapUsedMb: mb(heap?.heapUsed),
        heapTotalMb: mb(heap?.heapTotal),
        heapKeptMb: mb(heap?.kept),
        load: loadavg()
          .map((l) => l.toFixed(2))
          .join(' '),
      };
    } finally {
      cache.disconnect();
      await engine.stop();
    }
  } finally {
    await env.close();
  }
}

const roots = process.argv.slice(2).map((r) => resolve(r));
if (roots.length === 0) throw new Error('usage: compare-throughput.ts <checkout> [<checkout>…]');
for (const root of roots) console.log(JSON.stringify(await measureIn(root)));
