/**
 * `node --expose-gc --import tsx test/bench/sync-memory.ts [N]` (default 100,000): the memory of
 * the desired-state sync of `holdfast run` over a new provider of N consumers, apart from the
 * rest of the engine: its first pass (read, validate, deliver every consumer's spec to a queue
 * that only serializes each chunk's jobs, as BullMQ would), then a pass after one consumer
 * changed. Reports the heap and RSS sampled every 20 ms, the process's VmHWM, the heap a full
 * GC leaves after each pass (what the sync keeps), the passes' times and CPU (this process's, user + system: the
 * sync is all it runs) and the load average.
 */
// first, as the CLI's entry does: V8's heap bounded as in `holdfast run`
import '../../src/cli/heap-first.js';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DesiredSync } from '../../src/desired/desired-sync.js';
import { createLogger } from '../../src/logging/logger.js';
import { Scrubber } from '../../src/logging/scrubber.js';
import type { DesiredSpec } from '../../src/store/consumer-record.js';
import { mb, samplePeaks, vm } from './memory-peaks.js';
import { contributionItem, offlineProvider } from './offline-provider.js';

const n = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'holdfast-sync-memory-'));
const kept = () => {
  globalThis.gc?.();
  return mb(process.memoryUsage().heapUsed);
};
/** Writes the file a thousand items at a time, so that writing it leaves no peak of its own in this process. */
function writeContributions(file: string, changed?: number): void {
  const fd = openSync(file, 'w');
  writeSync(fd, 'consumers:\n');
  for (let from = 0; from < n; from += 1000) {
    const items = Array.from({ length: Math.min(1000, n - from) }, (_, k) => from + k);
    writeSync(
      fd,
      `${items.map((i) => contributionItem(i, i === changed ? `c${String(i).padStart(6, '0')}:other:*` : undefined)).join('\n')}\n`,
    );
  }
  closeSync(fd);
}

try {
  const { config, contributions: file } = await offlineProvider(dir);
  writeContributions(file);
  let jobs = 0;
  let largestChunk = 0;
  const queue = {
    deliverDesired: async (entries: ReadonlyArray<{ key: string; desired: DesiredSpec | null }>, at: number) => {
      const data = entries.map(({ key, desired }) => JSON.stringify({ key, kind: 'desired', at, desired }));
      jobs += data.length;
      largestChunk = Math.max(largestChunk, entries.length);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  const store = { setProviderStatus: () => Promise.resolve(), providerStatus: () => Promise.resolve(null) };
  const confirmations = {
    confirmedRemovals: () => Promise.resolve(null),
    confirmRemovals: () => Promise.resolve(),
    clearConfirmedRemovals: () => Promise.resolve(),
  };
  const logger = createLogger({ level: 'warn', format: 'json', scrubber: new Scrubber() });
  const sync = new DesiredSync({
    store,
    queue,
    confirmations,
    providers: config.providers,
    logger,
    now: () => new Date(),
    pollEveryMs: 3_600_000,
  });
  const before = { heap: kept(), hwm: vm('VmHWM') };
  const sampler = samplePeaks();
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const { user, system } = process.cpuUsage(since);
    return Math.round((user + system) / 1000);
  };
  let cpu0 = process.cpuUsage();
  let t0 = performance.now();
  await sync.syncProvider(config.providers[0]!, true);
  const firstMs = Math.round(performance.now() - t0);
  const firstCpuMs = cpuMs(cpu0);
  const keptAfterFirst = kept();
  const firstJobs = jobs;
  writeContributions(file, 7);
  cpu0 = process.cpuUsage();
  t0 = performance.now();
  await sync.syncProvider(config.providers[0]!, true);
  const secondMs = Math.round(performance.now() - t0);
  const secondCpuMs = cpuMs(cpu0);
  const peak = sampler.stop();
  const result = {
    consumers: n,
    firstPass: { ms: firstMs, cpuMs: firstCpuMs, jobs: firstJobs, heapKeptMb: keptAfterFirst },
    secondPass: { ms: secondMs, cpuMs: secondCpuMs, jobs: jobs - firstJobs, heapKeptMb: kept() },
    largestChunk,
    peakHeapMb: mb(peak.heap),
    peakRssMb: mb(peak.rss),
    vmHwmMb: Math.round(vm('VmHWM')),
    heapBeforeMb: before.heap,
    vmHwmBeforeMb: Math.round(before.hwm),
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
  console.log(JSON.stringify(result));
  await sync.stop();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
