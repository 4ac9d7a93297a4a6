/**
 * The README's first command works: the example runs, heals the restarted cache, a dropped ledger role and an object
 * store recreated empty, and stops clean.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('npm run example', () => {
  it('provisions the example consumers, heals them after the cache restarts, and exits 0', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '../../../examples/run-example.ts'), '--once'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // on a machine loaded by another suite the example may take long: stopped at 200 s, its output is the failure's
    // message
    const stopper = setTimeout(() => child.kill('SIGTERM'), 200_000);
    const code = await new Promise((resolve) => child.once('exit', resolve)).finally(() => clearTimeout(stopper));
    expect(code, output.slice(-6_000)).toBe(0);
    expect(output).toContain('app_photos logs in to the cache: true');
    expect(output).toContain('app_photos logs in to the cache: false');
    expect(output).toMatch(/healed \d+\.\d s after the restart/);
    expect(output.match(/all 9 consumers held/g)).toHaveLength(3);
    expect(output).toContain('app_reports logs in to the ledger: false');
    expect(output).toMatch(/healed \d+\.\d s after the drop: app_reports logs in to the ledger again/);
    expect(output).toContain('app_photos signs a request to the object store: true');
    expect(output).toContain('app_photos signs a request to the object store: false');
    expect(output).toMatch(/healed \d+\.\d s after the object store came back empty/);
    expect(output).toMatch(/dashboard: http:\/\/127\.0\.0\.1:\d+\//);
    expect(output).not.toMatch(/--pass '/);
    // holdfast's log as `holdfast run` shows it in a terminal, not JSON lines
    expect(output).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(holdfast\): dashboard at http:\/\/127\.0\.0\.1:\d+\//m);
    expect(output).not.toMatch(/^\{"level":/m);
    // and no control character but the newline and the example's own bold headings reaches the terminal
    // eslint-disable-next-line no-control-regex
    expect(output.replace(/\x1b\[[01]m/g, '')).not.toMatch(/(?!\n)[\p{Cc}\p{Cf}]/u);
  }, 240_000);
});
