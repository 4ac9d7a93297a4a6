/**
 * What reading a grant secret costs, run by hand: `npx tsx test/bench/grant-secret-read.ts`.
 * The routine check reads its consumer's secret at every check. Compares the synchronous read
 * holdfast had (openSync, fstatSync, readSync, closeSync on the event loop) with
 * {@link readGrantSecret}: per read, the event loop's busy time, the process's CPU (every thread)
 * and the wall time, one read at a time and 32 in flight (a worker's default concurrency).
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readGrantSecret } from '../../src/secrets/grant-secret.js';
import type { SecretRoots } from '../../src/secrets/secret-roots.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-secret-bench-'));
const path = join(dir, 'photos.secret');
writeFileSync(path, 'a-grant-secret-of-24-chars\n', { mode: 0o600 });
const roots: SecretRoots = {
  own: [
    { field: 'contributions', path: join(dir, 'contributions') },
    { field: 'secretsRoot', path: dir },
  ],
  foreign: [{ provider: 'ledger', field: 'secretsRoot', path: join(tmpdir(), 'ledger-grants') }],
};

const buffer = Buffer.allocUnsafe(4099);
/** The read holdfast had before (less its checks of the text, the same in both). */
function readBefore(): Promise<string> {
  const fd = openSync(path, 'r');
  let length = 0;
  try {
    fstatSync(fd);
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
  } finally {
    closeSync(fd);
  }
  return Promise.resolve(buffer.toString('utf8', 0, length));
}

async function measure(name: string, read: () => Promise<string>, reads: number, inFlight: number): Promise<void> {
  for (let i = 0; i < 2_000; i++) await read();
  const loop = performance.eventLoopUtilization();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < reads; i += inFlight) await Promise.all(Array.from({ length: inFlight }, read));
  const wall = ((performance.now() - start) * 1000) / reads;
  const busy = (performance.eventLoopUtilization(loop).active * 1000) / reads;
  const used = process.cpuUsage(cpu);
  const perRead = (v: number) => `${v.toFixed(1).padStart(6)} µs`;
  console.log(
    `${name.padEnd(22)} ${String(inFlight).padStart(2)} in flight: event loop ${perRead(busy)}, CPU ${perRead((used.user + used.system) / reads)}, wall ${perRead(wall)} a read`,
  );
}

try {
  const reads = 20_000;
  for (const inFlight of [1, 32]) {
    await measure('synchronous (before)', readBefore, reads, inFlight);
    await measure('readGrantSecret', () => readGrantSecret(path, roots), reads, inFlight);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
