/** The harness's safety net: whatever a run started is stopped and its files removed. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRunDir, reapRunDir, recordProcess, sweepStaleRunDirs } from '../backends/run-dir.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('run directory', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'run-dir-test-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('stops recorded processes, even paused ones, and removes the directory', async () => {
    const run = createRunDir(tmp);
    const child = spawn('sleep', ['300'], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    recordProcess(run, child.pid!, 'sleep');
    process.kill(child.pid!, 'SIGSTOP');

    const stopped = await reapRunDir(run);
    await exited;

    expect(stopped).toEqual([`sleep (pid ${child.pid})`]);
    expect(alive(child.pid!)).toBe(false);
    expect(existsSync(run.root)).toBe(false);
  });

  it('never kills a process whose pid was reused by another program', async () => {
    const run = createRunDir(tmp);
    const child = spawn('sleep', ['300'], { stdio: 'ignore' });
    recordProcess(run, child.pid!, 'redis-server');
    expect(await reapRunDir(run)).toEqual([]);
    expect(alive(child.pid!)).toBe(true);
    child.kill();
  });

  it('sweeps run directories whose owner died, and leaves live ones', async () => {
    const dead = createRunDir(tmp);
    writeFileSync(join(dead.root, 'owner'), '999999999');
    const live = createRunDir(tmp);
    await sweepStaleRunDirs(tmp);
    expect(existsSync(dead.root)).toBe(false);
    expect(existsSync(live.root)).toBe(true);
  });
});
