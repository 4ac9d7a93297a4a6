/**
 * A holdfast process for the benchmark: what `holdfast run` (or `holdfast worker`) does, plus
 * a report to its parent every second of its CPU time, memory and store operations.
 * Started by `engine-process.ts`: `node --import tsx engine-child.ts <config> <run|worker> <log file> [profile] [log=info]`.
 */
// first, as the CLI's entry does: V8's heap growth bounded before any other module loads; the
// engine is then loaded as `holdfast run` loads it, after (a static import would be loaded and
// compiled before this module's first line runs, its young generation grown meanwhile)
import '../../src/cli/heap-first.js';
import type { Profile } from './profile.js';

const { pino } = await import('pino');
const { ADAPTERS } = await import('../../src/adapters/registry.js');
const { loadConfig } = await import('../../src/config/load-config.js');
const { startEngine } = await import('../../src/engine/engine.js');
const { createLogger } = await import('../../src/logging/logger.js');
const { Scrubber } = await import('../../src/logging/scrubber.js');
const { profileEngine, profileNow } = await import('./profile.js');

export interface ChildStats {
  type: 'stats';
  at: number;
  cpuUs: number;
  rss: number;
  store: { reads: number; writes: number; scanned: number };
  /** `CreateAccessKey` requests the s3-identities adapters of this process sent. */
  createAccessKeys: number;
  /** With a fourth argument `profile`: calls and time by part (see `profile.ts`). */
  profile?: Profile;
}

/** What an s3-identities adapter counts; other adapters have no such count. */
const createAccessKeysOf = (adapter: unknown): number => {
  const count = (adapter as { createAccessKeyCalls?: unknown }).createAccessKeyCalls;
  return typeof count === 'number' ? count : 0;
};

const [configPath, role, logFile, ...flags] = process.argv.slice(2);
if (!configPath || !role || !logFile) throw new Error('usage: engine-child.ts <config> <run|worker> <log file>');
const send = (message: unknown) => process.send?.(message);

const config = await loadConfig(configPath, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
const scrubber = new Scrubber();
const logger = createLogger({
  level: flags.includes('log=info') ? 'info' : 'warn',
  format: 'json',
  scrubber,
  destination: pino.destination({ dest: logFile, sync: false }),
});
const started = Date.now();
const engine = await startEngine({ config, logger, scrubber, roles: { sync: role === 'run', worker: true } });
const profiling = flags.includes('profile');
if (profiling) profileEngine(engine);
send({ type: 'ready', startMs: Date.now() - started });

const report = () => {
  const cpu = process.cpuUsage();
  const createAccessKeys = [...engine.providers.values()].reduce((n, p) => n + createAccessKeysOf(p.adapter), 0);
  const stats: ChildStats = {
    type: 'stats',
    at: Date.now(),
    cpuUs: cpu.user + cpu.system,
    rss: process.memoryUsage().rss,
    store: { ...engine.store.counters },
    createAccessKeys,
    ...(profiling ? { profile: profileNow() } : {}),
  };
  send(stats);
};
const timer = setInterval(report, 1000);
report();
process.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  void engine.stop().finally(() => process.exit(0));
});
