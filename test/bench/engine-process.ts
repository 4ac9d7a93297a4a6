/** The benchmark's side of an engine child process: start it, read its reports, stop it. */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { ChildStats } from './engine-child.js';

export class EngineProcess {
  private latest: ChildStats | undefined;

  private constructor(
    private readonly child: ChildProcess,
    /** How long start-up took (configuration, first sweep, first sync). */
    readonly startMs: number,
  ) {
    child.on('message', (message: ChildStats | { type: string }) => {
      if (message.type === 'stats') this.latest = message as ChildStats;
    });
  }

  /**
   * `profile`: the child counts its parts' calls and time (`profile.ts`), in its reports.
   * `cpuProfileDir`: the child writes a V8 CPU profile there as it exits (read it with `cpu-profile-top.ts`).
   * `compiled`: the child runs as plain JavaScript, as the compiled `holdfast run` does (no tsx
   * loader, compiler or source maps in its heap: its memory is the operator's).
   * `logLevel`: the child's log (default warn; info for the node events' lines).
   */
  static async start(
    configPath: string,
    role: 'run' | 'worker',
    logFile: string,
    options: {
      profile?: boolean;
      cpuProfileDir?: string | undefined;
      compiled?: boolean;
      logLevel?: 'warn' | 'info';
    } = {},
  ): Promise<EngineProcess> {
    const cpuProfile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
    const entry = options.compiled ? compiledChild() : join(import.meta.dirname, 'engine-child.ts');
    const execArgv = [...(options.compiled ? [] : ['--import', 'tsx']), ...cpuProfile];
    const flags = [...(options.profile ? ['profile'] : []), ...(options.logLevel === 'info' ? ['log=info'] : [])];
    const child = fork(entry, [configPath, role, logFile, ...flags], {
      execArgv,
      stdio: 'inherit',
    });
    const startMs = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`the ${role} process exited (${code}) before it was ready; see ${logFile}`)),
      );
      child.on('message', (message: { type: string; startMs?: number }) => {
        if (message.type === 'ready') resolve(message.startMs ?? 0);
      });
    });
    const engine = new EngineProcess(child, startMs);
    await engine.fresh();
    return engine;
  }

  /** The child's process id (for `/proc/<pid>/status`). */
  get pid(): number {
    return this.child.pid ?? NaN;
  }

  /** The next report (at most about a second old when it arrives). */
  async fresh(): Promise<ChildStats> {
    const since = Date.now();
    for (;;) {
      if (this.latest && this.latest.at >= since) return this.latest;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.send('stop');
    const timeout = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timeout);
  }
}

/**
 * `engine-child.ts` and holdfast's sources compiled into one JavaScript module (packages left to
 * `node_modules`), made once per bench run beside this file so that packages resolve as they do
 * for `dist/`.
 */
function compiledChild(): string {
  const outfile = join(import.meta.dirname, '.compiled', 'engine-child.mjs');
  buildSync({
    entryPoints: [join(import.meta.dirname, 'engine-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return outfile;
}
