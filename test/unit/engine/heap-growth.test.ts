import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childEnvironment } from '../../backends/settings.js';

const root = join(import.meta.dirname, '../../..');
const heapFirst = pathToFileURL(join(root, 'src/cli/heap-first.ts')).href;
const heapGrowth = pathToFileURL(join(root, 'src/engine/heap-growth.ts')).href;
const MB = 1024 * 1024;

/**
 * A process that loads the CLI's first module, then allocates much that survives a while (as a start-up's parse does):
 * its young generation's size, in bytes.
 */
function youngGenerationAfterBurst(flags: string[] = [], env: Record<string, string> = {}, released = false): number {
  const release = released ? `(await import(${JSON.stringify(heapGrowth)})).releaseYoungGeneration();` : '';
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    await import(${JSON.stringify(heapFirst)});
    ${release}
    const kept = [];
    for (let round = 0; round < 120; round++) {
      const batch = [];
      for (let i = 0; i < 50000; i++) batch.push({ a: 'x' + i, b: [i], c: { d: i } });
      kept.push(batch[round]);
    }
    process.stdout.write(String(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
  const out = execFileSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    env: childEnvironment({ NODE_OPTIONS: '', ...env }),
    encoding: 'utf8',
  });
  return Number(out);
}

/** Loaded before the CLI: says the process's young generation's size (bytes) on stderr as it exits. */
const YOUNG_AT_EXIT =
  'data:text/javascript,import v8 from "node:v8"; process.on("exit", () => process.stderr.write(`young generation: ${v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size}\\n`));';

/** A configuration whose store is never reached: `holdfast run` loads everything it runs with, then gives up. */
function unreachableConfig(dir: string): string {
  mkdirSync(join(dir, 'secrets'));
  for (const name of ['queue', 'store', 'cache'])
    writeFileSync(join(dir, 'secrets', name), 'a-long-enough-password', { mode: 0o600 });
  writeFileSync(join(dir, 'secrets/fingerprint.key'), Buffer.alloc(32, 1), { mode: 0o600 });
  writeFileSync(join(dir, 'cache.yaml'), 'consumers: []\n');
  const lines = [
    'queue: { url: "redis://127.0.0.1:1", passwordFile: secrets/queue }',
    'store: { url: "mongodb://127.0.0.1:1/", passwordFile: secrets/store }',
    'fingerprintKeyFile: secrets/fingerprint.key',
    'providers:',
    '  - { name: cache, adapter: redis-acl, admin: { url: "redis://127.0.0.1:3", passwordFile: secrets/cache }, contributions: cache.yaml }',
  ];
  writeFileSync(join(dir, 'holdfast.yaml'), `${lines.join('\n')}\n`);
  return join(dir, 'holdfast.yaml');
}

describe('V8 heap bounds of a holdfast process', () => {
  it('are set by the holdfast command before it loads its commands and the engine (loaded first, they had grown the young generation to 8 MB)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'holdfast-heap-'));
    try {
      const config = unreachableConfig(dir);
      const start = () =>
        spawnSync(
          process.execPath,
          ['--import', YOUNG_AT_EXIT, '--import', 'tsx', join(root, 'src/cli/main.ts'), 'run', '-c', config],
          { cwd: root, env: childEnvironment({ NODE_OPTIONS: '' }), encoding: 'utf8' },
        );
      // tsx compiles every module on a checkout's first run (8 MB then, in a fresh clone); measured once compiled, as
      // every later start runs
      start();
      const run = start();
      expect(run.stderr).toContain('could not be reached');
      const young = /young generation: (\d+)/.exec(run.stderr);
      expect(Number(young?.[1])).toBeLessThan(8 * MB);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('keeps the young generation at the size V8 starts it with through a burst of allocation (V8 alone grows it to 32 MB)', () => {
    expect(youngGenerationAfterBurst()).toBeLessThanOrEqual(8 * MB);
  }, 60_000);

  it('lets the young generation grow as V8 would once the start-up is behind (released)', () => {
    expect(youngGenerationAfterBurst([], {}, true)).toBeGreaterThan(8 * MB);
  }, 60_000);

  it('leaves the young generation of a process started with its own semi-space size (command line or NODE_OPTIONS) to grow as asked', () => {
    expect(youngGenerationAfterBurst(['--max-semi-space-size=8'])).toBeGreaterThan(8 * MB);
    expect(youngGenerationAfterBurst([], { NODE_OPTIONS: '--max-semi-space-size=8' })).toBeGreaterThan(8 * MB);
  }, 60_000);
});
