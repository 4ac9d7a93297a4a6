/**
 * A holdfast engine in this test process, configured through a real YAML file and real
 * contributions, on real servers, with its log lines captured.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll } from 'vitest';
import type { Adapter } from '../../../src/adapters/adapter.js';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { connectStore, startEngine, type Engine, type EngineOptions } from '../../../src/engine/engine.js';
import { startHttpServer, type HttpServer, type HttpServerOptions } from '../../../src/http/http-server.js';
import { createLogger } from '../../../src/logging/logger.js';
import { checkTicket, ConsumerQueue } from '../../../src/schedule/consumer-queue.js';
import { JobSeal } from '../../../src/queue/job-seal.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { statusReport, type StatusReport } from '../../../src/status/status-report.js';
import { isUnreadable, type ConsumerRecord, type StoredConsumer } from '../../../src/store/consumer-record.js';
import { STORE_COLLECTIONS } from '../../../src/store/consumer-store.js';
import { indexFerretDb, prepareFerretDbStore } from '../../backends/ferretdb-index.js';
import { sharedBackend, testDir, type BackendEndpoint } from '../../backends/index.js';
import { mongoLogin, postgresLogin, redisLogin } from '../../backends/logins.js';
import type { RedisClusterEndpoint } from '../../backends/redis-cluster.js';
import { s3Login } from './s3-login.js';

export interface FixtureOptions {
  /** The queue's Redis (default: the run's shared one). */
  queue?: BackendEndpoint;
  /** A Redis Cluster as the queue's Redis instead (`queue.cluster`); the prefix defaults to `{hf<tag>}`. */
  queueCluster?: RedisClusterEndpoint;
  /** The record store (default: the run's shared MongoDB wire server). */
  store?: BackendEndpoint;
  /** The server that holds the consumers (default: the run's shared Redis; give a test's own to restart it). */
  provider?: BackendEndpoint;
  /**
   * Lines for the provider's `admin:` instead of its `url:` (e.g. `sentinels: [...]` and `master: mymaster`);
   * `provider` still names a node to log in on.
   */
  adminLines?: string[];
  /** The adapter the provider uses (default `redis-acl`); `provider` must be a server of its kind. */
  adapterKind?: ProviderKindName;
  consumers: number;
  /** Timing keys for `defaults:` (e.g. `{ verifyEvery: '1s' }`). */
  timing?: Record<string, string | number>;
  /** Adapter used instead of redis-acl (for tests that need a misbehaving one). */
  adapter?: Adapter;
  concurrency?: number;
  sentinelEvery?: string;
  /** The provider's `policy:` (flow YAML) instead of its kind's usual one. */
  policy?: string;
  /**
   * More lines for the provider's configuration, e.g. `management: observe`; `{tag}` is the fixture's tag (logins are
   * `t<tag>_<id>`).
   */
  providerLines?: string[];
  /** The queue's key prefix (default `hf<tag>`); `{tag}` is substituted. */
  prefix?: string;
  /** `queue.shards` (default: not written, so 1). */
  shards?: number;
  /**
   * A second provider, `ledger`, beside `cache` (on the run's shared server of its kind): its
   * contributions in contributions/ledger.yaml, its grant secrets in grants-ledger/.
   */
  ledger?: { adapterKind: ProviderKindName; consumers: number };
}

/** Fixtures for one test file, each stopped (engines and files) after the file's tests. */
export function engineFixtures(): (options: FixtureOptions) => Promise<EngineFixture> {
  const made: EngineFixture[] = [];
  afterAll(() => Promise.all(made.map((f) => f.stop())));
  return async (options) => {
    const fixture = await EngineFixture.create(options);
    made.push(fixture);
    return fixture;
  };
}

/** A record the store returned, which the test expects this holdfast to read (null: none). */
export function readable(record: StoredConsumer | null): ConsumerRecord | null {
  if (record && isUnreadable(record))
    throw new Error(`the record of ${record._id} cannot be read: ${record.unreadable}`);
  return record;
}

export type ProviderKindName = 'redis-acl' | 'postgres-roles' | 'mongodb-users' | 's3-identities';

/** The run's shared server of a provider kind. */
export function sharedOf(kind: ProviderKindName): BackendEndpoint {
  const backend = {
    'redis-acl': 'redis',
    'postgres-roles': 'postgres',
    'mongodb-users': 'mongodb',
    's3-identities': 's3',
  } as const;
  return sharedBackend(backend[kind]);
}

/** How the fixture writes a provider of each kind, and logs in as one of its consumers. */
interface ProviderFlavor {
  adminUrl(b: BackendEndpoint): string;
  policy(tag: string): string;
  values(c: Consumer, tag: string, keys: string, commands: string[]): string;
  canLogin(b: BackendEndpoint, c: Consumer, tag: string): Promise<boolean>;
}

const FLAVORS: Record<ProviderKindName, ProviderFlavor> = {
  'redis-acl': {
    adminUrl: (b) => `redis://${b.host}:${b.port}`,
    policy: () => '{ keyPrefix: "{id}:", allowedCommands: ["+@read", "+@write", "+@connection"] }',
    values: (_c, _tag, keys, commands) => `{ keys: ["${keys}"], commands: ${JSON.stringify(commands)} }`,
    canLogin: (b, c) => redisLogin(b, c.login, c.password),
  },
  'postgres-roles': {
    adminUrl: (b) => `postgres://${b.host}:${b.port}/postgres`,
    policy: () => '{ allowedDatabases: [postgres] }',
    values: () => '{ databases: [postgres] }',
    canLogin: (b, c) => postgresLogin(b, c.login, c.password),
  },
  'mongodb-users': {
    adminUrl: (b) => `mongodb://${b.host}:${b.port}/?authSource=admin`,
    policy: (tag) => `{ allowedDatabases: [hfu${tag}] }`,
    values: (_c, tag) => `{ database: hfu${tag} }`,
    canLogin: (b, c, tag) => mongoLogin(b, c.login, c.password, `hfu${tag}`),
  },
  's3-identities': {
    // holdfast's admin URL carries no key pair: the access key id is the username, the secret the password file
    adminUrl: (b) => `http://${b.host}:${b.port}`,
    policy: () => '{}',
    values: (c) => `{ buckets: ["${c.id}-a"] }`,
    // the provider's name (before the key's `/`) is part of the derived access key id
    canLogin: (b, c) => s3Login(b, c.key.split('/')[0]!, c.login, c.password),
  },
};

export interface LogLine {
  level: number;
  msg: string;
  consumer?: string;
  [key: string]: unknown;
}

export interface Consumer {
  id: string;
  key: string;
  login: string;
  password: string;
  secretPath: string;
}

/**
 * `sharesHoldfastServer: true` for a provider on the queue's Redis or the store's server (the run's shared ones
 * serve both): said, as an operator of a small setup would; holdfast's names are then withheld from its consumers.
 */
function sharesLine(server: BackendEndpoint, holdfast: { queue: BackendEndpoint; store: BackendEndpoint }): string[] {
  const same = (b: BackendEndpoint) => b.host === server.host && b.port === server.port;
  return same(holdfast.queue) || same(holdfast.store) ? ['    sharesHoldfastServer: true'] : [];
}

function line(file: string, text: string) {
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
}

export class EngineFixture {
  readonly logs: LogLine[] = [];
  /** The `ledger` provider's consumers (keys `ledger/<id>`), when there is one. */
  ledgerConsumers: Consumer[] = [];
  readonly rawLog: string[] = [];
  engines: Engine[] = [];
  config!: HoldfastConfig;
  private constructor(
    readonly dir: string,
    readonly tag: string,
    readonly consumers: Consumer[],
    private readonly options: FixtureOptions & Required<Pick<FixtureOptions, 'queue' | 'store' | 'provider'>>,
  ) {}

  static async create(given: FixtureOptions): Promise<EngineFixture> {
    const kind = given.adapterKind ?? 'redis-acl';
    const options = {
      ...given,
      queue: given.queue ?? sharedBackend('redis'),
      store: given.store ?? sharedBackend('mongodb'),
      provider: given.provider ?? sharedOf(kind),
    };
    const dir = testDir('engine');
    const tag = randomBytes(4).toString('hex');
    for (const sub of ['secrets', 'grants', 'contributions', ...(given.ledger ? ['grants-ledger'] : [])])
      mkdirSync(join(dir, sub));
    const consumers: Consumer[] = Array.from({ length: options.consumers }, (_, i) => {
      const id = `c${String(i).padStart(4, '0')}`;
      return {
        id,
        key: `cache/${id}`,
        login: `t${tag}_${id}`,
        password: randomBytes(18).toString('base64url'),
        secretPath: join(dir, 'grants', `${id}.secret`),
      };
    });
    for (const c of consumers) line(c.secretPath, c.password);
    const fixture = new EngineFixture(dir, tag, consumers, options);
    fixture.writeContributions(consumers);
    line(join(dir, 'secrets/queue'), (given.queueCluster ?? options.queue).admin.password);
    line(join(dir, 'secrets/store'), options.store.admin.password);
    line(join(dir, 'secrets/cache'), options.provider.admin.password);
    const ledgerLines = given.ledger ? fixture.ledgerProvider(given.ledger.adapterKind, given.ledger.consumers) : [];
    const timing = Object.entries(options.timing ?? {})
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n');
    writeFileSync(
      join(dir, 'holdfast.yaml'),
      [
        'queue:',
        given.queueCluster
          ? `  cluster: [${given.queueCluster.urls.join(', ')}]`
          : `  url: redis://${options.queue.host}:${options.queue.port}`,
        `  username: ${(given.queueCluster ?? options.queue).admin.username}`,
        '  passwordFile: secrets/queue',
        `  prefix: "${(options.prefix ?? (given.queueCluster ? '{hf{tag}}' : 'hf{tag}')).replace('{tag}', tag)}"`,
        ...(options.shards === undefined ? [] : [`  shards: ${options.shards}`]),
        'store:',
        `  url: mongodb://${options.store.host}:${options.store.port}/?authSource=admin`,
        `  username: ${options.store.admin.username}`,
        '  passwordFile: secrets/store',
        `  database: hf${tag}`,
        `worker: { concurrency: ${options.concurrency ?? 16} }`,
        `sync: { pollEvery: 200ms, sentinelEvery: ${options.sentinelEvery ?? '10s'} }`,
        'log: { level: debug, format: json }',
        ...(timing ? ['defaults:', timing] : []),
        'providers:',
        '  - name: cache',
        `    adapter: ${kind}`,
        '    admin:',
        ...(options.adminLines ?? [`url: ${FLAVORS[kind].adminUrl(options.provider)}`]).map((l) => `      ${l}`),
        `      username: ${options.provider.admin.username}`,
        '      passwordFile: secrets/cache',
        '    contributions: contributions/cache.yaml',
        '    secretsRoot: grants',
        `    policy: ${given.policy ?? FLAVORS[kind].policy(tag)}`,
        ...(options.adminLines === undefined ? sharesLine(options.provider, options) : []),
        ...(options.providerLines ?? []).map((l) => `    ${l.replaceAll('{tag}', tag)}`),
        ...ledgerLines,
      ].join('\n'),
    );
    fixture.config = await loadConfig(join(dir, 'holdfast.yaml'), {
      adapters: ADAPTERS,
      environment: { stdoutIsTTY: false },
    });
    // the store's collections indexed before any holdfast (in process or spawned) first runs on it
    await prepareFerretDbStore(options.store, fixture.config.store.database, Object.values(STORE_COLLECTIONS));
    return fixture;
  }

  /**
   * Changes `queue.shards` in the configuration file, as an operator would, and reads it again (for the engines started
   * next).
   */
  async setShards(shards: number): Promise<void> {
    const file = join(this.dir, 'holdfast.yaml');
    const text = readFileSync(file, 'utf8').replace(/\n {2}shards: \d+/, '');
    writeFileSync(file, text.replace(/\n( {2}prefix: .*)/, `\n$1\n  shards: ${shards}`));
    this.config = await loadConfig(file, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
  }

  /** Makes the `ledger` provider's consumers, grant secrets and contributions; returns its lines of configuration. */
  private ledgerProvider(kind: ProviderKindName, count: number): string[] {
    const server = sharedOf(kind);
    this.ledgerConsumers = Array.from({ length: count }, (_, i) => {
      const id = `l${String(i).padStart(4, '0')}`;
      return {
        id,
        key: `ledger/${id}`,
        login: `t${this.tag}_${id}`,
        password: randomBytes(18).toString('base64url'),
        secretPath: join(this.dir, 'grants-ledger', `${id}.secret`),
      };
    });
    for (const c of this.ledgerConsumers) line(c.secretPath, c.password);
    line(join(this.dir, 'secrets/ledger'), server.admin.password);
    const items = this.ledgerConsumers.map(
      (c) =>
        `  - { id: ${c.id}, login: ${c.login}, secret: ../grants-ledger/${c.id}.secret, values: ${FLAVORS[kind].values(c, this.tag, '', [])} }`,
    );
    writeFileSync(
      join(this.dir, 'contributions/ledger.yaml'),
      count ? `consumers:\n${items.join('\n')}\n` : 'consumers: []\n',
    );
    this.ledgerKind = kind;
    return [
      '  - name: ledger',
      `    adapter: ${kind}`,
      '    admin:',
      `      url: ${FLAVORS[kind].adminUrl(server)}`,
      `      username: ${server.admin.username}`,
      '      passwordFile: secrets/ledger',
      '    contributions: contributions/ledger.yaml',
      '    secretsRoot: grants-ledger',
      `    policy: ${FLAVORS[kind].policy(this.tag)}`,
      ...sharesLine(server, this.options),
    ];
  }

  private ledgerKind: ProviderKindName | undefined;

  /** Authenticates a fresh connection to the `ledger` provider's server as one of its consumers. */
  async canLoginToLedger(c: Consumer): Promise<boolean> {
    if (!this.ledgerKind) throw new Error('no ledger provider');
    return FLAVORS[this.ledgerKind].canLogin(sharedOf(this.ledgerKind), c, this.tag).catch(() => false);
  }

  /**
   * Declares `consumers`, each with the key pattern `keys(c)` (default `<id>:*`) and the command rules `commands(c)`.
   */
  writeContributions(
    consumers: Consumer[],
    keys: (c: Consumer) => string = (c) => `${c.id}:*`,
    commands: (c: Consumer) => string[] = () => ['+@read', '+@write', '+@connection'],
  ): void {
    const items = consumers.map(
      (c) =>
        `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: ${this.flavor.values(c, this.tag, keys(c), commands(c))}`,
    );
    // written whole, then renamed into place, as a deployment tool would: the running sync never reads it half-written
    const file = join(this.dir, 'contributions/cache.yaml');
    writeFileSync(`${file}.new`, consumers.length ? `consumers:\n${items.join('\n')}\n` : 'consumers: []\n');
    renameSync(`${file}.new`, file);
  }

  /** Starts an engine (sync + worker unless told otherwise). */
  async start(
    roles: EngineOptions['roles'] = { sync: true, worker: true },
    adapter: Adapter | undefined = this.options.adapter,
    more: Pick<EngineOptions, 'metrics'> = {},
  ): Promise<Engine> {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const text of chunk.toString().split('\n').filter(Boolean)) {
          this.rawLog.push(text);
          this.logs.push(JSON.parse(text) as LogLine);
        }
        done();
      },
    });
    const scrubber = new Scrubber();
    const logger = createLogger({ level: 'debug', format: 'json', scrubber, destination: sink });
    const engine = await startEngine({
      config: this.config,
      logger,
      scrubber,
      roles,
      ...(adapter ? { adapters: new Map([['cache', adapter]]) } : {}),
      ...more,
    });
    this.engines.push(engine);
    await indexFerretDb(this.options.store);
    return engine;
  }

  /** Starts an engine and waits until every consumer is held. */
  async startHeld(roles?: EngineOptions['roles'], adapter?: Adapter): Promise<Engine> {
    const engine = await this.start(roles, adapter);
    await this.until('every consumer held', () => this.allHeld());
    return engine;
  }

  /**
   * The consumer's wait handed to the queue as a wait job delayed `delayMs` (an hour), with its
   * ticket (what a round does when a wait's run fails): a job for Bull Board to list, as routine
   * waits are in the due set; in the consumer's shard as the configuration now says.
   */
  async delayedWaitJob(key: string, delayMs = 3_600_000): Promise<void> {
    const { client, store } = await connectStore(this.config);
    const queue = new ConsumerQueue({ ...this.config.queue, seal: new JobSeal(this.config.fingerprintKey) });
    try {
      const record = await store.get(key);
      if (!record || isUnreadable(record) || !record.timer) throw new Error(`${key} has no wait to hand over`);
      const timer = { ...record.timer, dueAt: new Date(Date.now() + delayMs) };
      await queue.queueWaits([{ key, timer, ticket: checkTicket(record.machine, record.desired, record.appliedAt) }]);
    } finally {
      await queue.close();
      await client.close();
    }
  }

  /**
   * A read-only HTTP server on a free port over `engine` (as `holdfast run --http` serves it); `more` adds to its
   * options (auth).
   */
  httpServer(
    engine: Engine,
    metrics: HttpServerOptions['metrics'],
    more: Partial<HttpServerOptions> = {},
  ): Promise<HttpServer> {
    return startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      readOnly: true,
      store: engine.store,
      coordination: engine.coordination,
      queue: engine.queue,
      providers: this.config.providers,
      metrics,
      logger: createLogger({ level: 'fatal', format: 'json', scrubber: new Scrubber() }),
      ...more,
    });
  }

  async status(): Promise<StatusReport> {
    const engine = this.engines[0];
    if (!engine) throw new Error('no engine started');
    return statusReport(
      {
        store: engine.store,
        coordination: engine.coordination,
        providers: this.config.providers,
        queued: engine.queued,
      },
      new Date(),
      { all: true },
    );
  }

  /** Polls until `predicate` holds, or fails with the last status. */
  async until(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<number> {
    const start = Date.now();
    for (;;) {
      if (await predicate()) return Date.now() - start;
      if (Date.now() - start > timeoutMs) {
        const status = await this.status().catch(() => undefined);
        const states = status?.consumers
          .map((c) => `${c.consumer}:${c.state}`)
          .slice(0, 20)
          .join(' ');
        // the story of the first consumer not healthy, so that a failure in CI says how it got there
        const first = status?.consumers.find((c) => !c.healthy)?.consumer;
        const story = this.logs
          .filter((l) => l.consumer === first)
          .slice(-12)
          .map((l) => `  ${new Date(l.time as number).toISOString()} ${l.msg}`)
          .join('\n');
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; states: ${states}${story ? `\nlast lines of ${first}:\n${story}` : ''}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async allHeld(): Promise<boolean> {
    const status = await this.status();
    return (
      status.consumers.length === this.consumers.length + this.ledgerConsumers.length &&
      status.consumers.every((c) => c.state === 'held')
    );
  }

  /**
   * Whether every record has settled: held, its latest check ran at its current revision, and
   * a deep one came after its last apply, so that the next checks are light.
   */
  async settled(): Promise<boolean> {
    const engine = this.engines[0];
    if (!engine) throw new Error('no engine started');
    const records = (await engine.store.list()).map((r) => readable(r)!);
    const memos = await engine.coordination.locks.checkMemos(records.map((r) => r._id));
    return (
      records.length === this.consumers.length + this.ledgerConsumers.length &&
      records.every((r) => {
        const memo = memos.get(r._id);
        return (
          r.machine.state === 'held' &&
          memo?.rev === r.rev &&
          memo.deepAt !== null &&
          memo.deepAt >= (r.appliedAt?.getTime() ?? 0)
        );
      })
    );
  }

  /** Authenticates a fresh connection to the provider as the consumer. */
  async canLogin(c: Consumer, provider: BackendEndpoint = this.options.provider): Promise<boolean> {
    return this.flavor.canLogin(provider, c, this.tag).catch(() => false);
  }

  /** The provider's server. */
  get provider(): BackendEndpoint {
    return this.options.provider;
  }

  private get flavor(): ProviderFlavor {
    return FLAVORS[this.options.adapterKind ?? 'redis-acl'];
  }

  logsFor(consumer: Consumer): LogLine[] {
    return this.logs.filter((l) => l.consumer === consumer.key);
  }

  async stop(): Promise<void> {
    for (const engine of this.engines.splice(0)) await engine.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
