import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const heapFirst = pathToFileURL(join(root, 'src/cli/heap-first.ts')).href;
const MB = 1024 * 1024;

/** A process that loads the CLI's first module, then allocates much that survives a while (as a start-up's parse does): its young generation's size, in bytes. */
function youngGenerationAfterBurst(flags: string[] = [], env: NodeJS.ProcessEnv = {}): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    await import(${JSON.stringify(heapFirst)});
    const kept = [];
    for (let round = 0; round < 120; round++) {
      const batch = [];
      for (let i = 0; i < 50000; i++) batch.push({ a: 'x' + i, b: [i], c: { d: i } });
      kept.push(batch[round]);
    }
    process.stdout.write(String(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
  const out = execFileSync(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, env: { ...process.env, NODE_OPTIONS: '', ...env }, encoding: 'utf8' });
  return Number(out);
}

describe('V8 heap bounds of a holdfast process', () => {
  it('keeps the young generation at the size V8 starts it with through a burst of allocation (V8 alone grows it to 32 MB)', () => {
    expect(youngGenerationAfterBurst()).toBeLessThanOrEqual(8 * MB);
  }, 60_000);

  it('leaves the young generation of a process started with its own semi-space size (command line or NODE_OPTIONS) to grow as asked', () => {
    expect(youngGenerationAfterBurst(['--max-semi-space-size=8'])).toBeGreaterThan(8 * MB);
    expect(youngGenerationAfterBurst([], { NODE_OPTIONS: '--max-semi-space-size=8' })).toBeGreaterThan(8 * MB);
  }, 60_000);
});
