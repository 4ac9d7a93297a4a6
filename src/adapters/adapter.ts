/**
 * The adapter contract: how holdfast provisions one kind of backend. An adapter owns its
 * admin connection and exposes no driver types. Every call takes an AbortSignal; when it
 * aborts, the call rejects with a `DEADLINE_EXCEEDED` {@link HoldfastError} promptly,
 * whatever the backend is doing.
 */
import type { z } from 'zod';
import type { Incarnation, IncarnationChange } from './incarnation.js';
import type { FailedLoginsRead } from './login-failures.js';

/** What an adapter applies for one consumer. `password` was just read from the grant file. */
export interface Grant<Values = unknown> {
  login: string;
  password: string;
  values: Values;
  /**
   * A rotation's overlap: `create` keeps the passwords the login already accepts beside this
   * one, and `holds` accepts them beside it. Adapters whose backend holds one password per
   * login ignore it.
   */
  keepPasswords?: boolean;
}

/**
 * Why a backend does not hold a consumer: `missing`, `password-differs`, `rules-differ`,
 * `disabled`, or a word of the adapter's own (kebab-case, e.g. `roles-differ`,
 * `grants-differ`, `expired`). The machine carries it as words; it branches on none of them.
 */
export type NotHeldReason = 'missing' | 'password-differs' | 'rules-differ' | 'disabled' | (string & {});

/** The answer of {@link Adapter.holds}: held, or not held with a reason and a detail for the log. */
export type HoldsAnswer =
  | { held: true }
  | {
      held: false;
      reason: NotHeldReason;
      /** What differs, in words; never a secret. */
      detail: string;
      /**
       * The node of a backend of several nodes that does not hold it (`10.0.0.6:6379`); absent
       * when the backend is one node, or when it is not held anywhere. A create then applies
       * there (and wherever else it differs) only.
       */
      node?: string;
    };

export interface CallOptions {
  signal: AbortSignal;
  /**
   * When `signal` aborts (epoch ms), where the caller knows it: an adapter may have the server
   * keep the same deadline (PostgreSQL: `statement_timeout` and `lock_timeout`).
   */
  deadline?: number;
}

/** One consumer's part of a batch call: its own answer, or its own error (one failing never fails the others). */
export type Each<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * What an adapter can do for many consumers at once ({@link Adapter.batch}): `pipeline`, one
 * round trip per node for the whole batch (Redis); `transaction`, one transaction of several
 * logins (PostgreSQL); `concurrency`, calls at once, each its own. `limit`: consumers per batch.
 */
export interface BatchForm {
  form: 'pipeline' | 'transaction' | 'concurrency';
  limit: number;
}

export interface Adapter<Values = unknown> {
  /** Idempotent: makes the backend hold exactly this login, password and values. */
  create(grant: Grant<Values>, options: CallOptions): Promise<void>;
  /**
   * Removes the login; succeeds when it is already absent. `values` are the ones it was
   * applied with, when known: where a login lives in a place its values name (a MongoDB
   * database), it is removed there only.
   */
  remove(login: string, options: CallOptions, values?: Values): Promise<void>;
  /**
   * Deep check, read-only: asks the backend whether it holds the grant now, everything
   * compared (exists, enabled, password, rules). Throws when it cannot ask.
   */
  holds?(grant: Grant<Values>, options: CallOptions): Promise<HoldsAnswer>;
  /**
   * Light check, read-only and the cheapest the backend offers: can `grant.login`
   * authenticate with `grant.password` now? True proves the login exists, is enabled and
   * takes the password. False or a throw proves nothing more: the engine confirms it with
   * {@link holds} before anything is applied again, so the reason it logs stays exact.
   */
  authenticates?(grant: Grant<Values>, options: CallOptions): Promise<boolean>;
  /**
   * What this adapter can batch; absent: calls at once, each its own (the engine's default,
   * `src/adapters/batch-calls.ts`).
   */
  readonly batch?: BatchForm;
  /**
   * {@link create} for several grants (at most `batch.limit`, distinct logins) in as few round
   * trips as the backend allows; each grant's outcome its own, in order. Throws only when the
   * batch could not be sent at all (then every grant failed alike).
   */
  createMany?(grants: ReadonlyArray<Grant<Values>>, options: CallOptions): Promise<Array<Each<void>>>;
  /** {@link holds} for several grants at once, each answer its own, in order (see {@link createMany}). */
  holdsMany?(grants: ReadonlyArray<Grant<Values>>, options: CallOptions): Promise<Array<Each<HoldsAnswer>>>;
  /** Read-only: asks the backend to answer, as its administrator (for `holdfast doctor`). Throws when it does not. */
  ping?(options: CallOptions): Promise<void>;
  /**
   * Read-only, for `holdfast doctor`: what the backend lets every login do beyond the provider's policy, which
   * holdfast does not change (PostgreSQL's PUBLIC), one sentence each saying what the operator must revoke.
   */
  publicRights?(options: CallOptions): Promise<string[]>;
  /**
   * Logins on the backend that start with `prefix` and that this provider made (its mark), for
   * orphan reports: a login another provider (or a person) made is never listed. Logins in
   * `claimed` (its consumers') may be left out without being asked about: where the mark costs
   * a call per login to read (Redis), only the others are read.
   */
  list?(prefix: string, options: CallOptions, claimed?: ReadonlySet<string>): Promise<string[]>;
  /**
   * {@link list} per node, on a backend of several nodes (`host:port` → logins): what an orphan
   * report names, since a login may be on one node only.
   */
  listByNode?(prefix: string, options: CallOptions, claimed?: ReadonlySet<string>): Promise<Map<string, string[]>>;
  /**
   * Read-only: the connections open now of the logins in `logins`, each with its client's address and when it was
   * established (holdfast's own connections left out): who may still hold a rotated password. One read per node
   * serves every login (Redis: `CLIENT LIST TYPE normal`; PostgreSQL: `pg_stat_activity`). Absent: the backend cannot
   * tell when a connection began.
   */
  openConnections?(logins: ReadonlySet<string>, options: CallOptions): Promise<LoginSession[]>;
  /**
   * A backend of several nodes: tells `listener` what changes among its nodes (one stops
   * answering, answers again, joins, leaves; a failover), each said once. Returns the unsubscribe.
   */
  onNodeEvent?(listener: (event: BackendNodeEvent) => void): () => void;
  /** A backend of several nodes: each node now, its role, whether it answers and how many consumers it lacks. */
  nodeReport?(): BackendNodeReport[];
  /**
   * Each node's incarnation (`host:port` → what identifies this run of its server: `incarnation.ts`), read when
   * first asked, then at each health ping. Absent: the adapter cannot tell.
   */
  incarnations?(): ReadonlyMap<string, Incarnation>;
  /** Tells `listener` of each node seen as a new incarnation (`why`: a kind). Returns the unsubscribe. */
  onIncarnation?(listener: (change: IncarnationChange) => void): () => void;
  /**
   * Where the backend records failed logins (Redis: `ACL LOG`): each node's failed logins new since this adapter last
   * read it, read-only (`login-failures.ts`). Absent: the adapter cannot tell.
   */
  failedLogins?(options: CallOptions): Promise<FailedLoginsRead>;
  /** Closes the admin connection. */
  close(): Promise<void>;
}

/** One connection of a login, as the backend reports it ({@link Adapter.openConnections}). */
export interface LoginSession {
  login: string;
  /** The client's address as the server sees it (`10.0.0.7:51234`, `10.0.0.7`), or `unknown` where it hides it. */
  address: string;
  /** When the connection was established (ms since the epoch; Redis tells it to the second). */
  startedAt: number;
  /** On a backend of several nodes, the node it is on (`host:port`). */
  node?: string;
}

/** Something about a backend's nodes worth a log line (no secret in it). */
export interface BackendNodeEvent {
  level: 'info' | 'warn' | 'error';
  message: string;
  /** The node it is about, `host:port`. */
  node?: string;
}

/** One node of a backend of several, as the status shows it. */
export interface BackendNodeReport {
  address: string;
  role: 'master' | 'replica' | 'node';
  answering: boolean;
  /** Why it does not answer, when it does not. */
  why?: string;
  /** Since when it does not answer (ISO), when it does not. */
  since?: string;
  /**
   * How many consumers it lacks now, as this process's checks and applies found them (a light
   * check refused there, a deep check that found them not held there, an apply that failed there);
   * absent: none known.
   */
  missing?: number;
  /** Why, in words (e.g. `applying there failed (…NOPERM…)`), when it lacks any. */
  missingWhy?: string;
}

/** How to reach a backend as its administrator. The password was read from a file. */
export interface AdminConnection {
  /** URL without credentials, e.g. `redis://127.0.0.1:6379` (with {@link urls}: the first of them). */
  url: string;
  /**
   * Every host of one backend, where the adapter takes several ({@link AdapterKind.adminUrls}):
   * PostgreSQL's primary and standbys, of which the adapter writes to the one not in recovery.
   */
  urls?: readonly string[] | undefined;
  username?: string | undefined;
  password?: string | undefined;
  /**
   * At most this many calls at once on this provider (default 4); more wait their turn. An
   * adapter that pools admin connections keeps no more than this many.
   */
  maxConcurrentCalls?: number | undefined;
  /**
   * A backend of several nodes (Redis: a primary and its replicas, Sentinel, a Cluster), for
   * adapters that hold each login on every node ({@link AdapterKind.nodeForms}); absent: `url`
   * (and, unless `nodes` is `only`, the replicas it lists).
   */
  topology?: AdminTopology | undefined;
  /**
   * The provider's `verifyEvery` and `checkTimeout`: an adapter of several nodes finds its nodes
   * again at least every `verifyEveryMs` and gives up on a node that has not answered within a
   * third of `checkTimeoutMs` (so the other nodes' answers come within the check's deadline).
   */
  pace?: { verifyEveryMs: number; checkTimeoutMs: number } | undefined;
}

/**
 * How a backend's nodes are found. `url`: the admin URL's node and every replica it lists;
 * `sentinel`: the master `master` the Sentinels name and every replica they know; `cluster`:
 * every master and replica of the Cluster the seeds belong to. `nodes: only` holds the named
 * node(s) alone (no discovery). Sentinels may need their own credentials.
 */
export type AdminTopology =
  | { form: 'url'; nodes: 'discover' | 'only' }
  | {
      form: 'sentinel';
      sentinels: readonly string[];
      master: string;
      sentinelUsername?: string | undefined;
      sentinelPassword?: string | undefined;
      nodes: 'discover' | 'only';
    }
  | { form: 'cluster'; seeds: readonly string[]; nodes: 'discover' | 'only' };

/**
 * Whose logins an adapter makes. Each login it creates carries a mark naming `provider` that the
 * deep check can read and that a lost record store cannot erase (Redis: a channel permission,
 * MongoDB: `customData`, PostgreSQL: the role's comment). A login that already exists without
 * this provider's mark is never changed or removed: `create` throws `BACKEND_REFUSED` naming it,
 * unless `adopt` (then `create` takes it over and marks it).
 */
export interface Ownership {
  /** The provider's name, as in the configuration. */
  provider: string;
  /** Take over logins that exist without this provider's mark (said at start-up). */
  adopt: boolean;
}

/** A consumer as the policy sees it. */
export interface PolicySubject<Values = unknown> {
  id: string;
  login: string;
  values: Values;
}

/** One kind of name a policy gives out, and the template that starts every consumer's. */
export interface PolicyNamespace {
  /** What the names are, in the plural: `keys`, `channels`, `buckets`. */
  noun: string;
  /** The policy's field that holds the template, e.g. `keyPrefix`. */
  field: string;
  /** The template; undefined: every name on the backend (`allowAllKeys`), said by `allField`. */
  template: string | undefined;
  allField?: string;
}

/** What a consumer's values address: key and channel glob patterns (Redis's), database names. */
export interface AddressedNames {
  keys?: readonly string[];
  channels?: readonly string[];
  databases?: readonly string[];
}

/**
 * What configuration needs of an adapter kind, without its driver: everything but `connect`
 * (each adapter's `described.ts`). A command that reads configuration only (`holdfast status`)
 * loads these and no driver.
 */
export type AdapterDescription<Values = unknown, Policy = unknown> = Omit<AdapterKind<Values, Policy>, 'connect'>;

/**
 * One kind of backend: the shapes of its consumers' values and of its providers' policy,
 * the policy check, and how to connect.
 */
export interface AdapterKind<Values = unknown, Policy = unknown> {
  /** The name used in configuration, e.g. `redis-acl`. */
  readonly kind: string;
  /** Validates (and defaults) a consumer's `values`. */
  readonly valuesSchema: z.ZodType<Values>;
  /** Validates (and defaults) a provider's `policy`. */
  readonly policySchema: z.ZodType<Policy>;
  /**
   * What a consumer asks for beyond its provider's policy, one sentence per problem naming
   * the field; empty when allowed. Pure.
   */
  violations(subject: PolicySubject<Values>, policy: Policy): string[];
  /**
   * The forms of a password this backend's traffic may carry that derive from the password
   * alone (Redis: its SHA-256). The scrubber learns them; salted forms (SCRAM verifiers and
   * keys) are scrubbed by the adapter's own calls, which know the salt.
   */
  readonly secretForms?: (password: string) => readonly string[];
  /**
   * The login {@link connect} uses when the admin connection names none (Redis: `default`,
   * PostgreSQL: `postgres`); absent when the backend has none. No consumer may have it then.
   */
  readonly defaultAdminLogin?: string;
  /**
   * Whether a provider may list several hosts of its backend in `admin.urls` ({@link
   * AdminConnection.urls}) instead of one `admin.url` (PostgreSQL: a primary and its standbys).
   */
  readonly adminUrls?: boolean;
  /**
   * What one deep check ({@link Adapter.holds}) costs the backend's CPU, in microseconds, as
   * declared by the adapter (measured on a typical consumer). With the provider's
   * `deepCheckBudget` it sets how often each consumer is checked deeply; absent: every
   * `deepCheckEvery`.
   */
  readonly deepCheckCostUs?: number;
  /**
   * Why this backend would refuse `secret` as a consumer's password (S3: longer than 128
   * characters), in words that name no secret; undefined when it takes it. Asked when a grant
   * secret is read, before anything is sent: a refusal is `SECRET_INVALID`, naming the file.
   */
  readonly secretProblem?: (secret: string) => string | undefined;
  /**
   * The names the policy gives its consumers on the backend, beside their logins (Redis keys
   * and channels, S3 buckets), each from a template in the policy's `field`
   * (`src/adapters/name-templates.ts`). Two providers on one backend must give disjoint names:
   * checked at config load. Absent: the adapter gives none.
   */
  namespaces?(policy: Policy): readonly PolicyNamespace[];
  /**
   * What a consumer's values address on the backend (Redis key and channel patterns, a MongoDB
   * database): judged against holdfast's own names where a provider shares holdfast's queue or
   * store server (`sharesHoldfastServer`, `src/policy/own-names.ts`). Absent: the adapter addresses none.
   */
  addressed?(values: Values): AddressedNames;
  /**
   * The policy of a provider on holdfast's own server, tightened so that no consumer reaches
   * holdfast's data by a way its names do not govern (Redis: `SCAN` and `RANDOMKEY` name every key).
   */
  ownServerPolicy?(policy: Policy): Policy;
  /**
   * Opens the admin connection (lazily; a backend that is down does not make this throw), acting
   * for `ownership`'s provider. `policy` is the provider's (validated): what an adapter enforces
   * where rights are applied (Redis: the deny list after every consumer's rules); without it,
   * the policy's defaults.
   */
  connect(admin: AdminConnection, ownership: Ownership, policy?: Policy): Adapter<Values>;
  /**
   * Whether the admin may name several nodes (`sentinels`, `cluster`, `nodes`): the adapter then holds each login on
   * every node.
   */
  readonly nodeForms?: boolean;
}
