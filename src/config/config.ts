/**
 * The resolved configuration: validated, defaults applied, paths absolute, admin passwords
 * read from their files. Built only by `loadConfig`; everything else receives it.
 */
import type { Adapter, AdapterKind, AdminConnection, Ownership } from '../adapters/adapter.js';
import type { ForeignSecretRoot } from '../secrets/secret-roots.js';
import type { Timing } from './timing.js';

/** Per-provider timing, in milliseconds: each setting is declared once, in `timing.ts`. */
export type { Timing };

export interface ProviderConfig {
  name: string;
  adapter: AdapterKind;
  admin: AdminConnection;
  /** Absolute path of the contributions file. */
  contributionsPath: string;
  /** Validated by the adapter's policy schema. */
  policy: unknown;
  timing: Timing;
  /**
   * What holdfast may do on the backend: `manage` (create, change, remove; the default),
   * `observe` (check and report only) or `no-delete` (a consumer no longer declared stops being
   * managed; its login is left on the backend).
   */
  management: Management;
  /**
   * A change removing more than `share` of the provider's consumers, and more than `floor` of them, waits for `holdfast
   * confirm-removals`.
   */
  removalGuard: { share: number; floor: number };
  /** Absolute directory grant secrets may be in besides the contributions file's own; undefined: only the latter. */
  secretsRoot: string | undefined;
  /**
   * The grant-secret roots (contributions file's directory, `secretsRoot`) of every other
   * provider: no grant secret of this provider may be inside one (filled in by `loadConfig`).
   */
  foreignSecretRoots: readonly ForeignSecretRoot[];
  /**
   * A rotated grant secret's old password stays accepted beside the new one this long (backends that hold several);
   * absent: replaced at once.
   */
  rotationOverlapMs?: number | undefined;
  /** Take over logins that exist on the backend without this provider's mark (default false; said at start-up). */
  adopt: boolean;
  /** Every consumer's login starts with this; providers sharing a backend are kept apart by it. Absent: any login. */
  loginPrefix?: string | undefined;
  /**
   * Logins no consumer may have: the provider's admin, the queue's and the store's users, `default`, holdfast's own.
   */
  reservedLogins: readonly string[];
  /** A larger contributions file is refused unread (`sync.contributionsMaxBytes`; absent: 64 MiB). */
  contributionsMaxBytes?: number | undefined;
  /**
   * A contributions file declaring more consumers is refused whole, and the setting that says so
   * (`sync.maxConsumers`, or the provider's own `maxConsumers`); absent: 100,000, `sync.maxConsumers`.
   */
  maxConsumers?: { max: number; setting: string } | undefined;
  /**
   * Why each of {@link reservedLogins} is reserved, in words for a refusal (`is the admin login of provider cache`);
   * absent: `is reserved`.
   */
  reservedReasons?: ReadonlyMap<string, string> | undefined;
  /**
   * Logins under `prefix` that no consumer claims are reported (and removed, when `remove`); absent: not looked for.
   */
  orphans?: OrphanPolicy | undefined;
  /**
   * holdfast's own names on this provider's backend, which no consumer's values may address (set
   * with `sharesHoldfastServer`, see `own-servers.ts`); absent: the backend is none of holdfast's.
   */
  ownNames?: OwnNames | undefined;
}

/** holdfast's own names on a backend it shares with a provider: glob patterns (Redis) and databases (MongoDB). */
export interface OwnNames {
  /** What holdfast keeps there, in words for a refusal: `the queue's Redis (loopback:6379)`. */
  server: string;
  keys: readonly string[];
  channels: readonly string[];
  databases: readonly string[];
}

export interface OrphanPolicy {
  /** Only logins starting with this are holdfast's to judge. */
  prefix: string;
  /** The backend's logins are listed this often. */
  everyMs: number;
  /**
   * Remove orphans (seen on two listings in a row) rather than only report them; never under `observe` or `no-delete`.
   */
  remove: boolean;
}

export type Management = 'manage' | 'observe' | 'no-delete';

export interface RedisConnectionConfig {
  host: string;
  port: number;
  db: number;
  username?: string | undefined;
  password?: string | undefined;
  tls: boolean;
}

/**
 * A Redis Cluster: the nodes holdfast is told of (any of its nodes; the others are found from
 * them) and the credentials every node shares. A cluster has only database 0.
 */
export interface RedisClusterConfig {
  nodes: ReadonlyArray<{ host: string; port: number }>;
  username?: string | undefined;
  password?: string | undefined;
  tls: boolean;
}

/** The queue's Redis: one server (`queue.url`) or a Redis Cluster (`queue.cluster`). */
export type QueueConnectionConfig = RedisConnectionConfig | RedisClusterConfig;

/** Whether the queue's Redis is a Redis Cluster. */
export function isRedisCluster(connection: QueueConnectionConfig): connection is RedisClusterConfig {
  return 'nodes' in connection;
}

export interface HoldfastConfig {
  /** Absolute path of the configuration file. */
  source: string;
  queue: {
    connection: QueueConnectionConfig;
    /**
     * BullMQ key prefix (default `holdfast`); on a Redis Cluster it must hold a hash tag, e.g. `{holdfast}` (checked).
     */
    prefix: string;
    /** Queue name (default `consumers`). */
    name: string;
    /**
     * How many shards (hash tags, each its own BullMQ queue) consumers are spread over (default 1:
     * the prefix as given). See `queue/shard-prefixes.ts` and `queue/shard-of.ts`.
     */
    shards: number;
  };
  store: {
    /** MongoDB URL without credentials. */
    url: string;
    username?: string | undefined;
    password?: string | undefined;
    /** Database for holdfast's records (default `holdfast`). */
    database: string;
    /** How long a process waits at start-up (and `status`) for the store to answer before giving up (default 5 s). */
    connectTimeoutMs: number;
  };
  /** Key of the HMAC that fingerprints applied secrets. */
  fingerprintKey: Buffer;
  worker: {
    /** Jobs one worker process runs at once (default 32). */
    concurrency: number;
  };
  sync: {
    /** Contributions files are re-read at least this often, besides file-change events (default 5 s). */
    pollEveryMs: number;
    /**
     * The queue's Redis is asked this often whether it forgot everything (default 5 s, one EXISTS); if so, every job is
     * re-created.
     */
    resyncEveryMs: number;
    /** Every record is read and any job the queue lost re-created this often (default 30 min); also at start-up. */
    sweepEveryMs: number;
    /** A contributions file larger than this is refused before it is read (default 64 MiB). */
    contributionsMaxBytes: number;
  };
  log: {
    level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
    format: 'json' | 'pretty';
  };
  providers: ProviderConfig[];
  /** The HTTP server (dashboard, /status, /healthz, /metrics): off unless `listen` is given here or by `--http`. */
  http: HttpConfig;
}

export interface HttpConfig {
  listen?: { host: string; port: number } | undefined;
  /** Basic auth, when a password file is given. */
  auth?: { username: string; password: string } | undefined;
  /** Only GET and HEAD are answered (default true). */
  readOnly: boolean;
  /** `Host` names accepted besides the listen address (and loopback names); others get 421. */
  hosts: readonly string[];
}

/** Connects `provider`'s adapter (lazily) for its provider: its ownership and its policy. */
export function connectAdapter(
  provider: Pick<ProviderConfig, 'name' | 'adopt' | 'adapter' | 'admin' | 'policy'>,
): Adapter {
  return provider.adapter.connect(provider.admin, ownershipOf(provider), provider.policy);
}

/** Whose logins `provider`'s adapter makes (see {@link Ownership}). */
export function ownershipOf(provider: Pick<ProviderConfig, 'name' | 'adopt'>): Ownership {
  return { provider: provider.name, adopt: provider.adopt };
}
