/**
 * A run directory holds every throw-away data directory of one test run and a record of
 * every server process started in it, so whoever ends the run can stop what a crashed
 * worker left behind and remove everything.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  chmodSync,
  existsSync,
} from 'node:fs';
import { join } from 'node:path';

const PREFIX = 'holdfast-test-';

export interface RunDir {
  root: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates a run directory owned by this process (world-traversable: PostgreSQL runs as `postgres`). */
export function createRunDir(tmpRoot: string): RunDir {
  const root = mkdtempSync(join(tmpRoot, PREFIX));
  chmodSync(root, 0o755);
  mkdirSync(join(root, 'pids'));
  writeFileSync(join(root, 'owner'), String(process.pid));
  return { root };
}

/** Makes a fresh directory for one instance inside the run directory. */
export function instanceDir(run: RunDir, name: string): string {
  const dir = mkdtempSync(join(run.root, `${name}-`));
  chmodSync(dir, 0o755);
  return dir;
}

/** Records a started server so {@link reapRunDir} can stop it if its owner cannot. */
export function recordProcess(run: RunDir, pid: number, command: string): void {
  writeFileSync(join(run.root, 'pids', String(pid)), command);
}

export function forgetProcess(run: RunDir, pid: number): void {
  rmSync(join(run.root, 'pids', String(pid)), { force: true });
}

function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
  } catch {
    return undefined;
  }
}

/** Stops every recorded process still running (checking it is the same program) and removes the directory. */
export async function reapRunDir(run: RunDir): Promise<string[]> {
  const stopped: string[] = [];
  const killed: number[] = [];
  const pidsDir = join(run.root, 'pids');
  const pids = existsSync(pidsDir) ? readdirSync(pidsDir) : [];
  for (const name of pids) {
    const pid = Number(name);
    const command = readFileSync(join(pidsDir, name), 'utf8');
    if (!alive(pid) || commandOf(pid) !== command) continue;
    try {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
      stopped.push(`${command} (pid ${pid})`);
    } catch {
      // already gone
    }
  }
  // A killed process is gone once it no longer runs its program (a zombie has no command line).
  for (let i = 0; i < 50 && killed.some((pid) => alive(pid) && commandOf(pid)); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(run.root, { recursive: true, force: true });
  return stopped;
}

/** Removes run directories whose owning test run has died, stopping their servers first. */
export async function sweepStaleRunDirs(tmpRoot: string): Promise<void> {
  for (const entry of readdirSync(tmpRoot)) {
    if (!entry.startsWith(PREFIX)) continue;
    const root = join(tmpRoot, entry);
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(root, 'owner'), 'utf8'));
    } catch {
      // no owner file: half-created, treat as stale
    }
    if (Number.isInteger(owner) && alive(owner)) continue;
    await reapRunDir({ root });
  }
}
