/**
 * `npx tsx test/bench/parse-contributions.ts [N]` (default 100,000): how long reading a
 * contributions file of N consumers takes (`loadContributions`, as the sync reads it), and the
 * memory it takes: the heap and RSS sampled every 20 ms while it runs, and the process's VmHWM.
 * No server is started; the grant secrets are not written (the sync does not read them).
 *
 * `… parse-contributions.ts nested` (or `wide`): a file shaped to exhaust the parser instead, one
 * consumer then an entry whose values hold 4.5 million nested brackets each way (`nested`, 9 MB)
 * or a flat list of 4.5 million items (`wide`, 9 MB): how long it takes to be refused, and the
 * memory. On a holdfast without the parser bounds, run it capped: `timeout 300 node
 * --max-old-space-size=2048 --import tsx …`.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadContributions } from '../../src/desired/load-contributions.js';
import { isHoldfastError } from '../../src/errors/holdfast-error.js';
import { mb, samplePeaks, vm } from './memory-peaks.js';
import { contributionItem, offlineProvider } from './offline-provider.js';

const shape = process.argv[2] === 'nested' || process.argv[2] === 'wide' ? process.argv[2] : 'plain';
const n = shape === 'plain' ? Number(process.argv[2] ?? 100_000) : 2;
const HALF = 4_500_000;

/** The text of the file: `n` consumers, the last one's values shaped to exhaust the parser unless `plain`. */
function fileText(): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(contributionItem(i));
  if (shape === 'nested')
    lines[n - 1] = lines[n - 1]!.replace(/values: .*/, `values: { keys: ${'['.repeat(HALF)}${']'.repeat(HALF)} }`);
  if (shape === 'wide') lines[n - 1] = lines[n - 1]!.replace(/values: .*/, `values: { keys: [${'a,'.repeat(HALF)}a] }`);
  return `consumers:\n${lines.join('\n')}\n`;
}

const dir = mkdtempSync(join(tmpdir(), 'holdfast-parse-'));
try {
  const { config, contributions: file } = await offlineProvider(dir);
  writeFileSync(file, fileText());
  globalThis.gc?.();
  const before = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss, hwm: vm('VmHWM') };
  const sampler = samplePeaks();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcome = await loadContributions(config.providers[0]!).then(
    (state) => ({ consumers: state.consumers.length, refused: null }),
    (error: unknown) => ({ consumers: 0, refused: isHoldfastError(error) ? error.code : String(error) }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const peak = sampler.stop();
  globalThis.gc?.();
  const kept = process.memoryUsage().heapUsed;
  const result = {
    shape,
    ...outcome,
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
