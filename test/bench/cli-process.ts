/**
 * `holdfast run` or `holdfast worker` as an operator starts it: the compiled CLI (`dist/`, made by `npm run build`), its
 * output in a log file (its configuration's `log:` at level `info`, format `json`). Ready once it logs that it is running (after its start-up: for `run`, every record read and the first
 * sync done). Stopped by SIGTERM, as a service manager stops it; with `cpuProfileDir`, node writes its V8 CPU profile
 * there as it exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { processCpuMs } from './measure.js';

/** The compiled CLI's entry in this checkout. */
export const DIST_MAIN = join(import.meta.dirname, '../../dist/src/cli/main.js');

/** The line `holdfast run` and `holdfast worker` log once started (`src/cli/run-command.ts`). */
const READY = /"msg":"holdfast (?:worker )?running/;

export class CliProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly role: 'run' | 'worker',
    /** From its spawn to its line saying it runs. */
    readonly startMs: number,
    /** The CPU it used by then (its start-up's cost, whatever the machine's load stretched it to in time). */
    readonly startCpuMs: number,
  ) {}

  static async start(
    configPath: string,
    role: 'run' | 'worker',
    logFile: string,
    options: { cpuProfileDir?: string | undefined } = {},
  ): Promise<CliProcess> {
    if (!existsSync(DIST_MAIN)) throw new Error(`no ${DIST_MAIN}: run \`npm run build\` first`);
    const profile = options.cpuProfileDir
      ? ['--cpu-prof', '--cpu-prof-interval', '10000', `--cpu-prof-dir=${options.cpuProfileDir}`]
      : [];
    const log = openSync(logFile, 'a');
    const started = Date.now();
    const child = spawn(process.execPath, [...profile, DIST_MAIN, role, '--config', configPath], {
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    await untilReady(child, role, logFile);
    const cpuMs = processCpuMs(new Map([[role, child.pid ?? NaN]])).get(role)!;
    return new CliProcess(child, role, Date.now() - started, cpuMs);
  }

  get pid(): number {
    return this.child.pid ?? NaN;
  }

  /** SIGTERM, then SIGKILL after `graceMs` (a profiled process writes its profile as it exits). */
  async stop(graceMs = 120_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    const timeout = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timeout);
  }
}

/** Reads the log as it grows (from where it was last read) until the ready line; fails if the process exits first. */
async function untilReady(child: ChildProcess, role: string, logFile: string): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = String(code ?? signal)));
  const fd = openSync(logFile, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let position = 0;
  let tail = '';
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, position);
      position += n;
      tail = (tail + buffer.toString('utf8', 0, n)).slice(-4096);
      if (READY.test(tail)) return;
      if (exited !== undefined)
        throw new Error(`holdfast ${role} exited (${exited}) before it was running; see ${logFile}`);
      if (n < buffer.length) await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    closeSync(fd);
  }
}
