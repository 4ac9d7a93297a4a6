/**
 * The last-resort guard of `holdfast run`: a backend connection lost where nothing listened is
 * logged and counted and the process goes on; any other uncaught error still ends it (status 1).
 * Checked on real processes (a socket reset by its peer with no `error` listener) and by type.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MongoNetworkError } from 'mongodb';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isConnectionFault } from '../../../src/cli/connection-fault-guard.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';

const GUARD = fileURLToPath(new URL('../../../src/cli/connection-fault-guard.ts', import.meta.url));
const LOGGER = fileURLToPath(new URL('../../../src/logging/logger.ts', import.meta.url));
const SCRUBBER = fileURLToPath(new URL('../../../src/logging/scrubber.ts', import.meta.url));

/** Runs a child process that (maybe) installs the guard, then does `fault`; its status and output. */
function child(
  guarded: boolean,
  fault: 'socket-reset' | 'type-error' | 'rejected-reset',
): { status: number | null; out: string } {
  const script = `
    import net from 'node:net';
    import { guardConnectionFaults } from ${JSON.stringify(GUARD)};
    import { createLogger } from ${JSON.stringify(LOGGER)};
    import { Scrubber } from ${JSON.stringify(SCRUBBER)};
    let counted = 0;
    const scrubber = new Scrubber([]);
    if (${guarded}) guardConnectionFaults({ logger: createLogger({ level: 'info', format: 'json', scrubber }), scrubber, count: () => counted++ });
    const server = net.createServer((s) => s.resetAndDestroy()).listen(0, '127.0.0.1', () => {
      const port = server.address().port;
      if (${JSON.stringify(fault)} === 'type-error') setTimeout(() => { null.x; }, 10);
      else if (${JSON.stringify(fault)} === 'socket-reset') { const s = net.connect(port, '127.0.0.1'); s.on('connect', () => s.write('x')); }
      else Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }));
      setTimeout(() => { console.log('alive, counted ' + counted); server.close(); }, 500);
    });
  `;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describe('the connection-fault guard', () => {
  it('a socket reset by its peer where nothing listens: logged, counted, and the process goes on (without the guard it dies)', () => {
    const guarded = child(true, 'socket-reset');
    expect(guarded.out).toContain('alive, counted 1');
    expect(guarded.out).toContain('a backend connection was lost where nothing listened (uncaught-exception)');
    expect(guarded.status).toBe(0);
    const bare = child(false, 'socket-reset');
    expect(bare.status).not.toBe(0);
    expect(bare.out).not.toContain('alive');
  });

  it('a rejected promise no one awaits, of a lost connection: logged and counted', () => {
    const guarded = child(true, 'rejected-reset');
    expect(guarded.out).toContain('alive, counted 1');
    expect(guarded.out).toContain('(unhandled-rejection)');
  });

  it("any other uncaught error (a TypeError in holdfast's own code) still ends the process, logged", () => {
    const guarded = child(true, 'type-error');
    expect(guarded.status).toBe(1);
    expect(guarded.out).toContain('unexpected error (uncaught-exception); exiting');
    expect(guarded.out).not.toContain('alive');
  });

  it('knows a lost connection by its type, never by its words', () => {
    const socket = (code: string) => Object.assign(new Error(`read ${code}`), { code, syscall: 'read' });
    const database = (code: string) =>
      Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'), { code });
    for (const lost of [
      socket('ECONNRESET'),
      socket('EPIPE'),
      socket('ETIMEDOUT'),
      new MongoNetworkError('connection 3 closed'),
      database('57P01'),
      database('08006'),
    ]) {
      expect(isConnectionFault(lost), String(lost)).toBe(true);
    }
    for (const other of [
      new TypeError('Cannot read properties of null'),
      new RangeError('Maximum call stack size exceeded'),
      new Error('Connection terminated unexpectedly'), // words alone prove nothing
      Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }), // not raised by a socket (no syscall)
      socket('ENOENT'),
      database('23505'),
      new HoldfastError('BACKEND_UNAVAILABLE', 'could not run'),
      'ECONNRESET',
      undefined,
    ]) {
      expect(isConnectionFault(other), String(other)).toBe(false);
    }
  });
});
