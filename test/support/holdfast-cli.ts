/** holdfast's command line as a test runs it: the CLI from source, through tsx, with its output collected. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The CLI's entry point in this checkout. */
export const HOLDFAST_MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

/** A running `holdfast <args>`; `output()` is what it printed so far (stdout and stderr). */
export type HoldfastProcess = ChildProcess & { output: () => string };

export function spawnHoldfast(args: readonly string[]): HoldfastProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDFAST_MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return Object.assign(child, { output: () => output });
}

/** Its exit code, or `still running` after `ms` (generous: it loads the configuration and connects first). */
export function exitOf(child: ChildProcess, ms = 60_000): Promise<number | null | 'still running'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), ms);
    if (child.exitCode !== null) resolve(child.exitCode);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
