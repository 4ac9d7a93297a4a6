/** How the harness starts one kind of backend as a local process (see local-server.ts). */
import type { ProcessSpec } from './managed-process.js';
import type { AdminCredentials } from './types.js';

export interface Recipe {
  flavor: string;
  username: string;
  /** Generates the admin credentials, when the username is not fixed (SeaweedFS's access key id). */
  newAdmin?(): AdminCredentials;
  /** Loopback ports the server needs besides its client port (SeaweedFS: master, volume, filer, gRPC). */
  extraPorts?: number;
  /** How long a start may take before the harness gives up (default 30 s). */
  readyTimeoutMs?: number;
  url(port: number, password: string, username: string): string;
  /** Where the server's own Prometheus metrics are, from its extra ports (SeaweedFS: `-metricsPort`). */
  metricsUrl?(ports: readonly number[]): string;
  /** Where the server's filer answers HTTP, from its extra ports (SeaweedFS: `-filer.port`). */
  filerUrl?(ports: readonly number[]): string;
  /** Writes what the server holds in memory to its data directory before a restart that keeps data. */
  persist?(url: string): Promise<void>;
  /** Prepares the data directory; `fresh` means any previous data is discarded. */
  prepare(dir: string, password: string, fresh: boolean): void;
  /** Ends a standby's recovery (PostgreSQL: `pg_ctl promote`). */
  promote?(dir: string): void;
  /** Makes the stopped server in `dir` a standby of `primary` when it starts next (PostgreSQL). */
  follow?(dir: string, primary: { port: number; password: string }): void;
  spec(
    dir: string,
    port: number,
    password: string,
    more: { username: string; ports: readonly number[] },
  ): Omit<ProcessSpec, 'cwd' | 'logFile'>;
}
