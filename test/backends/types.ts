/**
 * The kinds of backend holdfast provisions on, and the queue/store servers it runs on:
 * `s3` is an S3 server with an IAM API (SeaweedFS).
 */
export type BackendKind = 'redis' | 'mongodb' | 'postgres' | 's3';

/** Where a test backend came from. */
export type BackendOrigin = 'url' | 'docker' | 'local';

/**
 * Admin credentials a backend was started with (or that its URL carries); for `s3`, the access key id and the secret
 * key.
 */
export interface AdminCredentials {
  username: string;
  password: string;
}

/**
 * A reachable backend. Plain data, so it can be passed from vitest's global setup to the
 * test workers. `url` carries the admin credentials.
 */
export interface BackendEndpoint {
  kind: BackendKind;
  origin: BackendOrigin;
  /** e.g. `redis-server 7.0.15`, `ferretdb v1.24.2`, `mongo:7`, `seaweedfs 4.48`. */
  flavor: string;
  host: string;
  port: number;
  admin: AdminCredentials;
  url: string;
  /**
   * Only a MongoDB wire server the harness started itself as FerretDB (SQLite handler): the
   * directory given to `--sqlite-url`, holding one `<database>.sqlite` file per database. Used
   * by `indexFerretDb` (test/backends/ferretdb-index.ts); absent for every other endpoint.
   */
  sqliteDir?: string;
  /**
   * Only a SeaweedFS the harness started as a local process: its Prometheus metrics (`/metrics`), for server-side
   * counts.
   */
  metricsUrl?: string;
  /** Only a SeaweedFS the harness started as a local process: its filer's HTTP API, to list what the server wrote. */
  filerUrl?: string;
}

export interface RestartOptions {
  /** Keep the data directory (default true). Redis never keeps ACL users without an ACL file. */
  keepData?: boolean;
}

/** A backend a test owns: it may restart, pause or stop it without disturbing other tests. */
export interface OwnedBackend extends BackendEndpoint {
  /** Stop and start again on the same port. */
  restart(options?: RestartOptions): Promise<void>;
  /** Stop the server, keeping its port and data: connections are refused until {@link up}. */
  down(): Promise<void>;
  /** Start a server stopped by {@link down} again, on the same port. */
  up(options?: RestartOptions): Promise<void>;
  /** Freeze the server (SIGSTOP or `docker pause`): connections stay open, nothing answers. */
  pause(): Promise<void>;
  /** Undo {@link pause}. */
  resume(): Promise<void>;
  /** Stop it for good and remove its data. Safe to call twice. */
  stop(): Promise<void>;
  /** What the server wrote to its log so far (local servers only: a container's log is not kept). */
  serverLog?(): string;
  /** The server's process id (local servers only). */
  readonly pid?: number | undefined;
}

export interface BackendOptions {
  /** Redis only: extra `redis-server` arguments, e.g. `['--aclfile', path]`. */
  redisArgs?: string[];
  /** PostgreSQL only: extra settings, each given as `-c key=value`, e.g. `{ log_statement: 'all' }`. */
  postgresSettings?: Record<string, string>;
  /**
   * PostgreSQL only, local processes only: start a streaming standby of this primary (`pg_basebackup -R`), not a new
   * cluster.
   */
  postgresStandbyOf?: { port: number; password: string };
}
