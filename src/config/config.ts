/**
 * The resolved configuration: validated, defaults applied, paths absolute, admin passwords
 * read from their files. Built only by `loadConfig`; everything else receives it.
 */
import type { Adapter, AdminConnection, Ownership } from '../adapters/adapter.js';
import type { ForeignSecretRoot } from '../secrets/secret-roots.js';
import type { Timing } from './timing.js';
import type { Resolved } from './option.js';
import type { HTTP_OPTIONS } from './http-options.js';
import type { LOG_OPTIONS, SYNC_OPTIONS, WORKER_OPTIONS } from './process-options.js';
import type { ORPHAN_OPTIONS, PROVIDER_FIELDS } from './provider-options.js';
import type { QUEUE_OPTIONS } from './queue-options.js';
import type { STORE_OPTIONS } from './store-options.js';

/** Per-provider timing, in milliseconds: each setting is declared once, in `timing.ts`. */
export type { Timing };

/** The options a provider's file gives as they are, each under its field: declared in `provider-options.ts`. */
type ProviderFields = Resolved<typeof PROVIDER_FIELDS>;

export interface ProviderConfig extends ProviderFields {
  admin: AdminConnection;
  /** Validated by the adapter's policy schema. */
  policy: unknown;
  timing: Timing;
  /**
   * The grant-secret roots (contributions file's directory, `secretsRoot`) of every other
   * provider: no grant secret of this provider may be inside one (filled in by `loadConfig`).
   */
  foreignSecretRoots: readonly ForeignSecretRoot[];
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

/** Logins under `prefix` that no consumer claims: listed every `everyMs`, reported (and removed, when `remove`). */
export type OrphanPolicy = Resolved<typeof ORPHAN_OPTIONS>;

/** What holdfast may do on a provider's backend: `manage`, `observe` or `no-delete` (see `provider-options.ts`). */
export type Management = ProviderConfig['management'];

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

/** Each section's options are declared once, in the `*-options.ts` files: their meanings, defaults and fields. */
export interface HoldfastConfig {
  /** Absolute path of the configuration file. */
  source: string;
  queue: { connection: QueueConnectionConfig } & Resolved<Pick<typeof QUEUE_OPTIONS, 'prefix' | 'name' | 'shards'>>;
  store: Resolved<typeof STORE_OPTIONS>;
  /** Key of the HMAC that fingerprints applied secrets (read from `fingerprintKeyFile`). */
  fingerprintKey: Buffer;
  worker: Resolved<typeof WORKER_OPTIONS>;
  /** `sync.maxConsumers` resolves per provider, into {@link ProviderConfig.maxConsumers}. */
  sync: Resolved<Omit<typeof SYNC_OPTIONS, 'maxConsumers'>>;
  /** The file's, or the environment's, which wins. */
  log: Required<Resolved<typeof LOG_OPTIONS>>;
  providers: ProviderConfig[];
  /** The HTTP server (dashboard, /status, /healthz, /metrics): off unless `listen` is given here or by `--http`. */
  http: HttpConfig;
}

/** The HTTP server's settings: `http.username` and `http.passwordFile` resolve into `auth`. */
export type HttpConfig = Resolved<Pick<typeof HTTP_OPTIONS, 'listen' | 'readOnly' | 'hosts'>> & {
  /** Basic auth, when a password file is given. */
  auth?: { username: string; password: string } | undefined;
};

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
