/**
 * `npx tsx test/bench/parse-contributions.ts [N]` (default 100,000): how long reading a
 * contributions file of N consumers takes (`loadContributions`, as the sync reads it), and the
 * memory it takes: the heap and RSS sampled every 20 ms while it runs, and the process's VmHWM.
 * No server is started; the grant secrets are not written (the sync does not read them).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadContributions } from '../../src/desired/load-contributions.js';
import { mb, samplePeaks, vm } from './memory-peaks.js';
import { contributionItem, offlineProvider } from './offline-provider.js';

const n = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'holdfast-parse-'));
try {
  const { config, contributions: file } = await offlineProvider(dir);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(contributionItem(i));
  writeFileSync(file, `consumers:\n${lines.join('\n')}\n`);
  lines.length = 0;
  globalThis.gc?.();
  const before = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss, hwm: vm('VmHWM') };
  const sampler = samplePeaks();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const state = await loadContributions(config.providers[0]!);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const peak = sampler.stop();
  globalThis.gc?.();
  const kept = process.memoryUsage().heapUsed;
  const result = {
    consumers: state.consumers.length,
    fileMb: mb(statSync(file).size),
    parseMs: Math.round(ms),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakHeapMb: mb(peak.heap),
    peakRssMb: mb(peak.rss),
    vmHwmMb: Math.round(vm('VmHWM')),
    heapBeforeMb: mb(before.heap),
    vmHwmBeforeMb: Math.round(before.hwm),
    heapKeptMb: mb(kept),
    load: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
