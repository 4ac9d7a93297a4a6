/**
 * One server process started by the harness: its output goes to a log file in its data
 * directory, it is recorded in the run directory, and it can be paused, resumed and stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { forgetProcess, recordProcess, type RunDir } from './run-dir.js';
import { serverEnvironment } from './settings.js';

export interface ProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  logFile: string;
  /** Run as this user (only possible when the harness runs as root). */
  user?: { uid: number; gid: number };
  /** Signal for a clean, fast stop (PostgreSQL wants SIGINT). */
  stopSignal?: NodeJS.Signals;
  /** How long a stop waits after {@link stopSignal} before SIGKILL (default 10 s). */
  stopTimeoutMs?: number;
  /** Extra environment variables, added to what a server is given of this process's own (`serverEnvironment`). */
  env?: Record<string, string>;
}

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly run: RunDir,
    private readonly spec: ProcessSpec,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    const log = openSync(this.spec.logFile, 'a');
    const child = spawn(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      stdio: ['ignore', log, log],
      env: serverEnvironment(this.spec.env),
      ...(this.spec.user ?? {}),
    });
    closeSync(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not start ${this.spec.command}: ${this.logTail()}`);
    recordProcess(this.run, child.pid, this.spec.command);
  }

  /** The last lines the process wrote, for error messages. */
  logTail(lines = 20): string {
    try {
      return readFileSync(this.spec.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  pause(): void {
    if (this.child?.pid !== undefined) process.kill(this.child.pid, 'SIGSTOP');
  }

  resume(): void {
    if (this.child?.pid !== undefined) process.kill(this.child.pid, 'SIGCONT');
  }

  async stop(timeoutMs = this.spec.stopTimeoutMs ?? 10_000): Promise<void> {
    const child = this.child;
    if (child?.pid === undefined) return;
    const pid = child.pid;
    if (this.running) {
      this.resume();
      child.kill(this.spec.stopSignal ?? 'SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    forgetProcess(this.run, pid);
    this.child = undefined;
  }
}
