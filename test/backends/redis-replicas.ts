/**
 * A real replicated Redis for integration tests: a primary and its replicas (`--replicaof`) as
 * local `redis-server` processes on free loopback ports, optionally watched by Sentinels
 * (`redis-server --sentinel`, `down-after-milliseconds` short, so a killed master's replica is
 * promoted in seconds). Every node requires the same admin password (`default`), and replicas
 * authenticate to their master with it (`masterauth`). Started per test file (it is killed,
 * paused and restarted), never shared.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { version } from './local-server.js';
import { ManagedProcess } from './managed-process.js';
import { freePorts } from './ports.js';
import { instanceDir, type RunDir } from './run-dir.js';
import type { TestBackendSettings } from './settings.js';
import type { AdminCredentials, BackendEndpoint } from './types.js';

export interface NodeAddress {
  host: string;
  port: number;
}

export const nodeAddress = (n: NodeAddress): string => `${n.host}:${n.port}`;

export interface RedisReplicasOptions {
  /** Replicas of the first node (default 2). */
  replicas?: number;
  /** Sentinels watching the set (default 0: none). */
  sentinels?: number;
  /** Sentinel's `down-after-milliseconds` (default 1000). */
  downAfterMs?: number;
}

/** The master name Sentinels monitor. */
export const SENTINEL_MASTER = 'mymaster';

/** Runs `use` on a fresh client (lazy, no retries, errors left to the calls), then disconnects it. */
async function withRedis<T>(options: RedisOptions, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true, ...options });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

export class LocalRedisReplicas {
  private readonly processes = new Map<string, ManagedProcess>();
  readonly admin: AdminCredentials;
  readonly flavor: string;

  private constructor(
    private readonly run: RunDir,
    private readonly settings: TestBackendSettings,
    private readonly dir: string,
    /** Every data node; the first is the master it started with. */
    readonly nodes: NodeAddress[],
    readonly sentinels: NodeAddress[],
    private readonly downAfterMs: number,
  ) {
    this.admin = { username: 'default', password: randomBytes(18).toString('base64url') };
    this.flavor = version(settings.binaries.redisServer, ['--version']).replace(
      /^Redis server v=(\S+).*/,
      'redis-server $1',
    );
  }

  static async start(
    run: RunDir,
    settings: TestBackendSettings,
    options: RedisReplicasOptions = {},
  ): Promise<LocalRedisReplicas> {
    const replicas = options.replicas ?? 2;
    const sentinelCount = options.sentinels ?? 0;
    const ports = await freePorts(1 + replicas + sentinelCount);
    const nodes = ports.slice(0, 1 + replicas).map((port) => ({ host: '127.0.0.1', port }));
    const sentinels = ports.slice(1 + replicas).map((port) => ({ host: '127.0.0.1', port }));
    const set = new LocalRedisReplicas(
      run,
      settings,
      instanceDir(run, 'redis-replicas'),
      nodes,
      sentinels,
      options.downAfterMs ?? 1000,
    );
    try {
      await set.launch(nodes[0]!, undefined);
      await Promise.all(nodes.slice(1).map((n) => set.launch(n, nodes[0])));
      await set.waitReplicating(nodes[0]!, replicas);
      await Promise.all(sentinels.map((s) => set.launchSentinel(s)));
      if (sentinels.length > 0) await set.waitSentinelsSee(replicas);
      return set;
    } catch (error) {
      await set.stop();
      throw error;
    }
  }

  /** `redis://host:port`, without credentials. */
  url(node: NodeAddress): string {
    return `redis://${nodeAddress(node)}`;
  }

  /** `node` as a backend endpoint (its `url` carries the admin credentials), for a provider configured on it. */
  endpoint(node: NodeAddress): BackendEndpoint {
    const { username, password } = this.admin;
    return {
      kind: 'redis',
      origin: 'local',
      flavor: this.flavor,
      host: node.host,
      port: node.port,
      admin: this.admin,
      url: `redis://${username}:${password}@${nodeAddress(node)}`,
    };
  }

  get sentinelUrls(): string[] {
    return this.sentinels.map((s) => this.url(s));
  }

  /** Runs `use` on a fresh admin client of `node`. */
  withNode<T>(node: NodeAddress, use: (client: Redis) => Promise<T>): Promise<T> {
    return withRedis({ ...node, ...this.admin, connectTimeout: 2000 }, use);
  }

  /** The master the Sentinels name now (the first that answers), or the first node without Sentinels. */
  async currentMaster(): Promise<NodeAddress> {
    if (this.sentinels.length === 0) return this.nodes[0]!;
    for (const s of this.sentinels) {
      try {
        const reply = await withRedis(
          { ...s, connectTimeout: 1000 },
          (client) =>
            client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER) as Promise<[string, string] | null>,
        );
        if (reply) return { host: reply[0], port: Number(reply[1]) };
      } catch {
        // the next sentinel
      }
    }
    throw new Error('no sentinel answers');
  }

  /** Waits until the Sentinels name a master other than `old` (a failover done); returns it. */
  async waitForNewMaster(old: NodeAddress, timeoutMs = 60_000): Promise<NodeAddress> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const master = await this.currentMaster().catch(() => old);
      if (nodeAddress(master) !== nodeAddress(old)) {
        const role = await this.withNode(master, (c) => c.info('replication')).catch(() => '');
        if (role.includes('role:master')) return master;
      }
      if (Date.now() > deadline) throw new Error(`no failover from ${nodeAddress(old)} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * A replica added to the running set: started empty on a free port (no ACL user: Redis does not replicate them) as a
   * replica of the current master; returned once the master lists it online and every Sentinel lists it.
   */
  async addReplica(): Promise<NodeAddress> {
    const [port] = await freePorts(1);
    const node = { host: '127.0.0.1', port: port! };
    const master = await this.currentMaster();
    this.nodes.push(node);
    await this.launch(node, master);
    await this.waitReplicating(master, this.nodes.length - 1);
    if (this.sentinels.length > 0) await this.waitSentinelsSee(this.nodes.length - 1);
    return node;
  }

  /** `SENTINEL RESET` of the master on every Sentinel: they forget its replicas (and find the live ones again). */
  async resetSentinels(): Promise<void> {
    await Promise.all(
      this.sentinels.map((s) =>
        withRedis({ ...s, connectTimeout: 1000 }, (client) => client.call('SENTINEL', 'RESET', SENTINEL_MASTER)),
      ),
    );
  }

  /** `kill -9` of one node: no goodbye to its clients. */
  kill(node: NodeAddress): void {
    const proc = this.processes.get(nodeAddress(node));
    if (proc?.pid === undefined || !proc.running) throw new Error(`no running node at ${nodeAddress(node)}`);
    process.kill(proc.pid, 'SIGKILL');
  }

  pause(node: NodeAddress): void {
    this.processes.get(nodeAddress(node))?.pause();
  }

  resume(node: NodeAddress): void {
    this.processes.get(nodeAddress(node))?.resume();
  }

  /**
   * Stops `node` (if it runs) and starts it again empty (no data, no ACL users), as a replica of
   * the current master unless it is the current master itself.
   */
  async restartEmpty(node: NodeAddress): Promise<void> {
    const proc = this.processes.get(nodeAddress(node));
    if (proc?.running) await proc.stop(2000);
    const master = await this.currentMaster().catch(() => this.nodes[0]!);
    rmSync(join(this.dir, String(node.port)), { recursive: true, force: true });
    await this.launch(node, nodeAddress(master) === nodeAddress(node) ? undefined : master);
  }

  private async launch(node: NodeAddress, replicaOf: NodeAddress | undefined): Promise<void> {
    const dir = join(this.dir, String(node.port));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const { password } = this.admin;
    const proc = new ManagedProcess(this.run, {
      command: this.settings.binaries.redisServer,
      args: [
        '--bind',
        node.host,
        '--port',
        String(node.port),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--repl-diskless-sync',
        'yes',
        '--repl-diskless-sync-delay',
        '0',
        '--requirepass',
        password,
        '--masterauth',
        password,
        '--daemonize',
        'no',
        '--protected-mode',
        'no',
        ...(replicaOf ? ['--replicaof', replicaOf.host, String(replicaOf.port)] : []),
      ],
      cwd: dir,
      logFile: `${dir}.log`,
    });
    this.processes.set(nodeAddress(node), proc);
    proc.start();
    await this.waitAnswers(node, proc, () => this.withNode(node, (c) => c.ping()));
  }

  private async launchSentinel(node: NodeAddress): Promise<void> {
    const file = join(this.dir, `sentinel-${node.port}.conf`);
    const master = this.nodes[0]!;
    writeFileSync(
      file,
      [
        `bind ${node.host}`,
        `port ${node.port}`,
        'protected-mode no',
        `dir ${this.dir}`,
        `sentinel monitor ${SENTINEL_MASTER} ${master.host} ${master.port} 2`,
        `sentinel auth-pass ${SENTINEL_MASTER} ${this.admin.password}`,
        `sentinel down-after-milliseconds ${SENTINEL_MASTER} ${this.downAfterMs}`,
        `sentinel failover-timeout ${SENTINEL_MASTER} 10000`,
        `sentinel parallel-syncs ${SENTINEL_MASTER} 2`,
        '',
      ].join('\n'),
    );
    const proc = new ManagedProcess(this.run, {
      command: this.settings.binaries.redisServer,
      args: [file, '--sentinel'],
      cwd: this.dir,
      logFile: join(this.dir, `sentinel-${node.port}.log`),
    });
    this.processes.set(`sentinel ${nodeAddress(node)}`, proc);
    proc.start();
    await this.waitAnswers(node, proc, async () => {
      await withRedis(node, (client) => client.ping());
    });
  }

  private async waitAnswers(node: NodeAddress, proc: ManagedProcess, ping: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (
        await ping().then(
          () => true,
          () => false,
        )
      )
        return;
      if (!proc.running || Date.now() > deadline)
        throw new Error(`redis-server on ${nodeAddress(node)} did not start:\n${proc.logTail()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until `master` lists `count` replicas online. */
  async waitReplicating(master: NodeAddress, count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.withNode(master, (c) => c.info('replication')).catch(() => '');
      const online = info.split('\n').filter((l) => /^slave\d+:.*state=online/.test(l)).length;
      if (online >= count) return;
      if (Date.now() > deadline)
        throw new Error(`${nodeAddress(master)} lists ${online} of ${count} replicas online:\n${info}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async waitSentinelsSee(replicas: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (const s of this.sentinels) {
      await withRedis(s, async (client) => {
        for (;;) {
          const seen = (await client.call('SENTINEL', 'REPLICAS', SENTINEL_MASTER)) as unknown[];
          const sentinels = (await client.call('SENTINEL', 'SENTINELS', SENTINEL_MASTER)) as unknown[];
          if (seen.length >= replicas && sentinels.length >= this.sentinels.length - 1) return;
          if (Date.now() > deadline)
            throw new Error(
              `sentinel ${nodeAddress(s)} sees ${seen.length} replicas and ${sentinels.length} other sentinels`,
            );
          await new Promise((r) => setTimeout(r, 100));
        }
      });
    }
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.processes.values()].map((p) => p.stop(2000)));
    this.processes.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
