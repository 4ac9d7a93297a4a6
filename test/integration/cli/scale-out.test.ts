/**
 * Scaling out (docs/scaling.md, "Scaling out"): a `holdfast worker` started against a hash-tagged queue
 * prefix (what a Redis Cluster needs: every key of the queue in one slot) runs, and serves
 * the consumers that a `holdfast run` elsewhere delivers.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineFixtures } from '../engine/engine-fixture.js';

const MAIN = join(import.meta.dirname, '../../../src/cli/main.ts');

describe('holdfast worker with a hash-tagged prefix', () => {
  const fixture = engineFixtures();
  const children: Array<ReturnType<typeof spawn>> = [];
  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('runs and applies every consumer delivered by a sync-only holdfast', async () => {
    const f = await fixture({ consumers: 3, prefix: '{hf{tag}}' });
    expect(f.config.queue.prefix).toMatch(/^\{hf[0-9a-f]{8}\}$/);
    await f.start({ sync: true, worker: false });
    const worker = spawn(process.execPath, ['--import', 'tsx', MAIN, 'worker', '-c', join(f.dir, 'holdfast.yaml')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    let output = '';
    worker.stdout.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr.on('data', (d: Buffer) => (output += d.toString()));
    await f
      .until('every consumer held by the worker process', () => f.allHeld(), 60_000)
      .catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    expect(output).toContain('holdfast worker running');
    expect(worker.exitCode).toBeNull();
  });
});
