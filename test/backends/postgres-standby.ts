/**
 * A PostgreSQL streaming standby as the harness makes one: a base backup of a running primary
 * taken with `pg_basebackup -R` (which writes `primary_conninfo` and `standby.signal`), started
 * as its own server; promoted with `pg_ctl promote`. An old primary stopped cleanly before the
 * promotion can follow the new one as it is (no `pg_rewind`: its WAL ends before the new timeline
 * forks).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnvironment } from './settings.js';

/** The primary a standby follows: its port and the admin (`postgres`) password it was made with. */
export interface StandbyOf {
  port: number;
  password: string;
}

/** Makes `data` a standby of `primary` (the directory must not exist or be empty). */
export function baseBackup(
  bin: (name: string) => string,
  data: string,
  primary: StandbyOf,
  user: { uid: number; gid: number } | undefined,
): void {
  execFileSync(
    bin('pg_basebackup'),
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      data,
      '-R',
      '-X',
      'stream',
      '--no-sync',
      '--checkpoint=fast',
    ],
    { stdio: 'pipe', env: childEnvironment({ PGPASSWORD: primary.password }), ...(user ?? {}) },
  );
}

/** Ends recovery on the standby in `dir` (`pg_ctl promote`, waiting until it takes writes). */
export function promote(
  bin: (name: string) => string,
  dir: string,
  user: { uid: number; gid: number } | undefined,
): void {
  execFileSync(bin('pg_ctl'), ['promote', '-D', join(dir, 'pgdata'), '-w', '-t', '60'], {
    stdio: 'pipe',
    ...(user ?? {}),
  });
}

/**
 * Makes the stopped server in `dir` a standby of `primary` when it starts next (`standby.signal`, `primary_conninfo`).
 */
export function followPrimary(dir: string, primary: StandbyOf, user: { uid: number; gid: number } | undefined): void {
  const data = join(dir, 'pgdata');
  const signal = join(data, 'standby.signal');
  const conf = join(data, 'postgresql.auto.conf');
  writeFileSync(signal, '');
  appendFileSync(
    conf,
    `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres password=${primary.password}'\n`,
  );
  if (user) for (const file of [signal, conf]) chownSync(file, user.uid, user.gid);
}
