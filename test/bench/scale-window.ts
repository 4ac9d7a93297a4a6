/**
 * One steady window of the scale bench (`scale.ts`): checks asked and done, their lateness, each process's CPU per
 * check and share of a core, resident memory, and the queue Redis's `used_memory` per consumer.
 *
 * Lateness is measured once the engine runs: for a sample of consumers, the gap between two checks both made after
 * `since` (the engine's start-up over; read from what the queue's Redis remembers of each) and the second in the
 * window, less the wait each asked for. A consumer of the sample not checked at all since `since` by the window's end
 * is counted apart (`notChecked`): the start-up's backlog shows there, not as a gap.
 */
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { verifyDelay } from '../../machines/delays.js';
import type { HoldfastConfig } from '../../src/config/config.js';
import { connectCoordination } from '../../src/engine/engine.js';
import { dueCounts } from '../support/due-set.js';
import type { BenchEnv } from './bench-env.js';
import { CostMeter, countSent } from './cost-meter.js';
import { checksIn, percentile, processCpuMs, processMemoryMb } from './measure.js';
import { localPort } from './wire.js';

export interface WindowFigures {
  seconds: number;
  donePerSec: number;
  deepShare: number;
  late: { p50Ms: number; p99Ms: number; samples: number; sampled: number; notChecked: number };
  dueNotTaken: { start: number; end: number };
  /** Engine CPU (ms) per check done: `holdfast run`, `holdfast worker`, and the two together. */
  cpuMsPerCheck: { run: number; worker: number; engine: number };
  /** Each process's CPU over the window, in cores (1 = one core busy throughout). */
  coreShare: Record<string, number>;
  memoryMb: Record<string, { rss: number; peak: number }>;
  queueUsedMemoryMb: number;
  queueCallsPerCheck: number;
  load: { start: number[]; end: number[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;
const load = () => loadavg().map((n) => round(n, 2));

export async function usedMemoryMb(queue: Redis): Promise<number> {
  const info = await queue.info('memory');
  return round(Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN) / 2 ** 20, 1);
}

/** Gaps between two checks of a sampled consumer, both after `since`. */
class WindowLateness {
  private readonly last = new Map<string, number>();
  readonly lateMs: number[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly reads: ReturnType<typeof connectCoordination>['coordination'],
    private readonly keys: readonly string[],
    private readonly delayOf: (key: string) => number,
    private readonly since: number,
  ) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => void this.poll(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Sampled consumers with no check made since `since` (at the last poll). */
  get notChecked(): number {
    return this.keys.filter((key) => (this.last.get(key) ?? 0) < this.since).length;
  }

  private async poll(): Promise<void> {
    const memos = await this.reads.locks.checkMemos(this.keys).catch(() => new Map<string, { at: number }>());
    for (const key of this.keys) {
      const at = memos.get(key)?.at;
      if (at === undefined) continue;
      const previous = this.last.get(key);
      this.last.set(key, at);
      if (previous !== undefined && previous >= this.since && at > previous)
        this.lateMs.push(Math.max(0, at - previous - this.delayOf(key)));
    }
  }
}

/** Measures `windowMs` of the engine running since `since`: `pids` by label, `run` and `worker` among them. */
export async function measureWindow(
  env: BenchEnv,
  config: HoldfastConfig,
  pids: ReadonlyMap<string, number>,
  window: { ms: number; since: number },
): Promise<WindowFigures> {
  const windowMs = window.ms;
  const timing = config.providers[0]!.timing;
  const queue = new Redis(env.queue.url);
  const { redis, coordination } = connectCoordination(config);
  const sent = countSent(redis as Redis);
  const step = Math.max(1, Math.floor(env.consumers.length / 2000));
  const keys = env.consumers.filter((_, i) => i % step === 0).map((c) => c.key);
  const lateness = new WindowLateness(coordination, keys, (key) => verifyDelay(key, timing), window.since);
  const meter = new CostMeter(env, []);
  try {
    lateness.start(Math.min(5_000, windowMs / 20));
    meter.exclude.add(localPort(redis as Redis));
    meter.exclude.add(localPort(queue));
    const start = {
      load: load(),
      cpu: processCpuMs(pids),
      due: await dueOf(queue, config),
      snapshot: await meter.snapshot(),
    };
    const sentAtStart = sent();
    await sleep(windowMs);
    const snapshot = await meter.snapshot();
    const end = { load: load(), cpu: processCpuMs(pids), due: await dueOf(queue, config) };
    meter.ownQueueCalls = sent() - sentAtStart;
    const w = meter.between(start.snapshot, snapshot);
    const { light, deep } = checksIn(w.cache);
    const checks = Math.max(1, light + deep);
    const used = (label: string) => end.cpu.get(label)! - start.cpu.get(label)!;
    return {
      seconds: round(w.seconds, 1),
      donePerSec: round((light + deep) / w.seconds, 1),
      deepShare: round(deep / checks, 4),
      late: {
        p50Ms: percentile(lateness.lateMs, 50),
        p99Ms: percentile(lateness.lateMs, 99),
        samples: lateness.lateMs.length,
        sampled: keys.length,
        notChecked: lateness.notChecked,
      },
      dueNotTaken: { start: start.due, end: end.due },
      cpuMsPerCheck: {
        run: round(used('run') / checks, 4),
        worker: round(used('worker') / checks, 4),
        engine: round((used('run') + used('worker')) / checks, 4),
      },
      coreShare: Object.fromEntries([...end.cpu].map(([label]) => [label, round(used(label) / (w.seconds * 1000), 2)])),
      memoryMb: Object.fromEntries(processMemoryMb(pids)),
      queueUsedMemoryMb: await usedMemoryMb(queue),
      queueCallsPerCheck: meter.perUnit(w, checks).queueCalls,
      load: { start: start.load, end: end.load },
    };
  } finally {
    lateness.stop();
    redis.disconnect();
    queue.disconnect();
  }
}

async function dueOf(queue: Redis, config: HoldfastConfig): Promise<number> {
  return (await dueCounts(queue, config.queue.prefix)).due;
}
