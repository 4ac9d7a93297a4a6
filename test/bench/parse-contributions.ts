/**
 * `npx tsx test/bench/parse-contributions.ts [N]` (default 100,000): how long reading a
 * contributions file of N consumers takes (`loadContributions`, as the sync reads it), and the
 * memory it takes: the heap and RSS sampled every 20 ms while it runs, and the process's VmHWM.
 * No server is started; the grant secrets are not written (the sync does not read them).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADAPTERS } from '../../src/adapters/registry.js';
import { loadConfig } from '../../src/config/load-config.js';
import { loadContributions } from '../../src/desired/load-contributions.js';
/** As `bench-env.ts` declares its consumers' commands. */
const COMMANDS = ['+@read', '+@write', '+@connection'];

const n = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'holdfast-parse-'));
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
const vm = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;
try {
  for (const sub of ['grants', 'secrets', 'contributions']) mkdirSync(join(dir, sub));
  for (const name of ['queue', 'store', 'cache']) writeFileSync(join(dir, 'secrets', name), 'a-long-enough-password', { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/fingerprint.key'), Buffer.alloc(32, 1), { mode: 0o600 });
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `c${String(i).padStart(6, '0')}`;
    lines.push(`  - id: ${id}\n    login: hf_${id}\n    secret: ../grants/${id}.secret\n    values: { keys: ["${id}:*"], commands: ${JSON.stringify(COMMANDS)} }`);
  }
  const file = join(dir, 'contributions/cache.yaml');
  writeFileSync(file, `consumers:\n${lines.join('\n')}\n`);
  lines.length = 0;
  writeFileSync(
    join(dir, 'holdfast.yaml'),
    [
      'queue: { url: "redis://127.0.0.1:1", passwordFile: secrets/queue }',
      'store: { url: "mongodb://127.0.0.1:1/", passwordFile: secrets/store }',
      'fingerprintKeyFile: secrets/fingerprint.key',
      'providers:',
      '  - name: cache',
      '    adapter: redis-acl',
      '    admin: { url: "redis://127.0.0.1:1", passwordFile: secrets/cache }',
      '    contributions: contributions/cache.yaml',
      '    secretsRoot: grants',
      `    policy: { keyPrefix: "{id}:", allowedCommands: ${JSON.stringify(COMMANDS)} }`,
    ].join('\n') + '\n',
  );
  const config = await loadConfig(join(dir, 'holdfast.yaml'), { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
  globalThis.gc?.();
  const before = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss, hwm: vm('VmHWM') };
  let peakHeap = before.heap;
  let peakRss = before.rss;
  const sampler = setInterval(() => {
    const { heapUsed, rss } = process.memoryUsage();
    peakHeap = Math.max(peakHeap, heapUsed);
    peakRss = Math.max(peakRss, rss);
  }, 20);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const state = await loadContributions(config.providers[0]!);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  globalThis.gc?.();
  const kept = process.memoryUsage().heapUsed;
  const result = {
    consumers: state.consumers.length,
    fileMb: mb(statSync(file).size),
    parseMs: Math.round(ms),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakHeapMb: mb(peakHeap),
    peakRssMb: mb(peakRss),
    vmHwmMb: Math.round(vm('VmHWM')),
    heapBeforeMb: mb(before.heap),
    vmHwmBeforeMb: Math.round(before.hwm),
    heapKeptMb: mb(kept),
    load: loadavg().map((l) => l.toFixed(2)).join(' '),
  };
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
