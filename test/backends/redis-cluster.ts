/**
 * A real Redis Cluster for integration tests: masters and their replicas as local
 * `redis-server --cluster-enabled yes` processes on free loopback ports, joined by
 * `redis-cli --cluster create`, with a short `cluster-node-timeout` so a killed master's
 * replica is promoted in seconds. Or the cluster `HOLDFAST_TEST_REDIS_CLUSTER_URLS` names
 * (comma-separated `redis://[default:<password>@]host:port`), used as it is: never killed.
 *
 * The helpers below (`clusterNodes`, `slotOwner`, `keysPerMaster`, `flushMasters`) work on
 * either; `kill` only on a cluster the test started.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { version } from './local-server.js';
import { ManagedProcess } from './managed-process.js';
import { CLUSTER_BUS_OFFSET, freePorts } from './ports.js';
import { instanceDir, type RunDir } from './run-dir.js';
import { childEnvironment, type TestBackendSettings } from './settings.js';
import type { AdminCredentials, BackendOrigin } from './types.js';
import { countMatching } from '../support/key-spread.js';

const run = promisify(execFile);

/** One node of a cluster, as `host:port`. */
export interface ClusterNodeAddress {
  host: string;
  port: number;
}

/** A reachable cluster. Plain data, so it can be passed from vitest's global setup to the test workers. */
export interface RedisClusterEndpoint {
  origin: BackendOrigin;
  /** e.g. `redis-server 7.0.15 cluster (3 masters, 3 replicas)`. */
  flavor: string;
  /** Every node, masters and replicas, as started (or as the environment names them). */
  nodes: ClusterNodeAddress[];
  /** Every node's `redis://host:port`, without credentials: what a holdfast `queue.cluster` lists. */
  urls: string[];
  admin: AdminCredentials;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** `cluster-node-timeout` (default 2 s): how soon a dead master is failed over. */
  nodeTimeoutMs?: number;
}

/** A node as `CLUSTER NODES` describes it. */
export interface ClusterNode extends ClusterNodeAddress {
  id: string;
  role: 'master' | 'replica';
  /** The master's id, for a replica. */
  masterId: string | null;
  /** `fail` or `fail?` among its flags. */
  failing: boolean;
  /** Its slot ranges, for a master: `[first, last]` each. */
  slots: Array<[number, number]>;
}

export const addressOf = (n: ClusterNodeAddress): string => `${n.host}:${n.port}`;

/** The cluster `HOLDFAST_TEST_REDIS_CLUSTER_URLS` names, if it does. */
export function clusterFromEnvironment(
  settings: Pick<TestBackendSettings, 'redisClusterUrls'>,
): RedisClusterEndpoint | undefined {
  const raw = settings.redisClusterUrls
    ?.split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (!raw || raw.length === 0) return undefined;
  const urls = raw.map((u) => new URL(u));
  const nodes = urls.map((u) => ({ host: u.hostname, port: Number(u.port || 6379) }));
  const first = urls[0]!;
  return {
    origin: 'url',
    flavor: `redis cluster at ${nodes.map(addressOf).join(',')}`,
    nodes,
    urls: nodes.map((n) => `redis://${addressOf(n)}`),
    admin: { username: decodeURIComponent(first.username || 'default'), password: decodeURIComponent(first.password) },
  };
}

/** A client of one node, with the cluster's admin credentials. */
export function nodeClient(endpoint: RedisClusterEndpoint, node: ClusterNodeAddress): Redis {
  const client = new Redis({
    ...node,
    ...credentials(endpoint),
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  client.on('error', () => undefined);
  return client;
}

/** A cluster client of the whole cluster (for tests that write or read keys). */
export function clusterClient(endpoint: RedisClusterEndpoint): Cluster {
  const client = new Cluster(endpoint.nodes, { redisOptions: credentials(endpoint) });
  client.on('error', () => undefined);
  return client;
}

function credentials(endpoint: RedisClusterEndpoint): { username?: string; password?: string } {
  return endpoint.admin.password ? { username: endpoint.admin.username, password: endpoint.admin.password } : {};
}

export async function withNode<T>(
  endpoint: RedisClusterEndpoint,
  node: ClusterNodeAddress,
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  const client = nodeClient(endpoint, node);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** Parses `CLUSTER NODES`. */
export function parseClusterNodes(text: string): ClusterNode[] {
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.split(' ');
      const [hostPort] = address!.split('@');
      const colon = hostPort!.lastIndexOf(':');
      const flagList = flags!.split(',');
      return {
        id: id!,
        host: hostPort!.slice(0, colon),
        port: Number(hostPort!.slice(colon + 1)),
        role: flagList.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? null : master!,
        failing: flagList.includes('fail') || flagList.includes('fail?'),
        slots: slots
          .filter((s) => /^\d/.test(s))
          .map((s) => {
            const [first, last] = s.split('-').map(Number);
            return [first!, last ?? first!] as [number, number];
          }),
      };
    });
}

/** What the first node of `endpoint.nodes` that answers replies to `command`. */
async function askAnyNode(endpoint: RedisClusterEndpoint, ...command: [string, ...string[]]): Promise<unknown> {
  let last: unknown;
  for (const node of endpoint.nodes) {
    try {
      return await withNode(endpoint, node, (c) => c.call(...command));
    } catch (error) {
      last = error;
    }
  }
  throw new Error(`no node of the cluster answers: ${String(last)}`);
}

/** The cluster's nodes as the first node of `endpoint.nodes` that answers sees them. */
export async function clusterNodes(endpoint: RedisClusterEndpoint): Promise<ClusterNode[]> {
  return parseClusterNodes(String(await askAnyNode(endpoint, 'CLUSTER', 'NODES')));
}

/** The masters that answer (not failing), with their slots. */
export async function clusterMasters(endpoint: RedisClusterEndpoint): Promise<ClusterNode[]> {
  return (await clusterNodes(endpoint)).filter((n) => n.role === 'master' && !n.failing && n.slots.length > 0);
}

/** The hash slot of `key` (`CLUSTER KEYSLOT`). */
export async function keySlot(endpoint: RedisClusterEndpoint, key: string): Promise<number> {
  return Number(await askAnyNode(endpoint, 'CLUSTER', 'KEYSLOT', key));
}

/** The master that serves `key`'s slot now. */
export async function slotOwner(endpoint: RedisClusterEndpoint, key: string): Promise<ClusterNode> {
  const slot = await keySlot(endpoint, key);
  const owner = (await clusterMasters(endpoint)).find((m) =>
    m.slots.some(([first, last]) => slot >= first && slot <= last),
  );
  if (!owner) throw new Error(`no live master serves slot ${slot} (of ${key})`);
  return owner;
}

/** How many keys matching `match` (default every key) each live master holds, by `host:port`. */
export async function keysPerMaster(endpoint: RedisClusterEndpoint, match = '*'): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const master of await clusterMasters(endpoint)) {
    counts.set(addressOf(master), await withNode(endpoint, master, (c) => countMatching(c, match)));
  }
  return counts;
}

/** `FLUSHALL` on every live master: the cluster forgets everything. */
export async function flushMasters(endpoint: RedisClusterEndpoint): Promise<void> {
  for (const master of await clusterMasters(endpoint)) await withNode(endpoint, master, (c) => c.flushall());
}

/**
 * Waits until every node that answers says `cluster_state:ok` and sees `size` nodes, none failing, each replica's link
 * up.
 */
export async function waitForClusterOk(
  endpoint: RedisClusterEndpoint,
  options: { timeoutMs?: number; nodes?: ClusterNodeAddress[] } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const why = await notOk(endpoint, options.nodes ?? endpoint.nodes);
    if (why === '') return;
    if (Date.now() > deadline) throw new Error(`the cluster ${endpoint.urls.join(',')} is not ok: ${why}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function notOk(endpoint: RedisClusterEndpoint, nodes: ClusterNodeAddress[]): Promise<string> {
  for (const node of nodes) {
    const why = await withNode(endpoint, node, async (c) => {
      const info = String(await c.call('CLUSTER', 'INFO'));
      if (!info.includes('cluster_state:ok')) return 'cluster_state is not ok';
      const seen = parseClusterNodes(String(await c.call('CLUSTER', 'NODES')));
      if (seen.length < nodes.length) return `sees ${seen.length} of ${nodes.length} nodes`;
      if (seen.some((n) => n.failing && nodes.some((m) => addressOf(m) === addressOf(n)))) return 'sees a node failing';
      const replication = await c.info('replication');
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up'))
        return 'its link to its master is down';
      return '';
    }).catch((error: unknown) => String(error));
    if (why !== '') return `${addressOf(node)}: ${why}`;
  }
  return '';
}

/** A cluster this test run started: it may kill its nodes. */
export class LocalRedisCluster {
  private readonly processes = new Map<string, ManagedProcess>();

  private constructor(
    readonly endpoint: RedisClusterEndpoint,
    private readonly dir: string,
  ) {}

  static async start(
    runDir: RunDir,
    settings: TestBackendSettings,
    options: RedisClusterOptions = {},
  ): Promise<LocalRedisCluster> {
    const masters = options.masters ?? 3;
    const replicas = options.replicasPerMaster ?? 1;
    const flavor = version(settings.binaries.redisServer, ['--version']).replace(
      /^Redis server v=(\S+).*/,
      'redis-server $1',
    );
    const ports = await freePorts(masters * (1 + replicas), [CLUSTER_BUS_OFFSET]);
    const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
    const admin = { username: 'default', password: randomBytes(18).toString('base64url') };
    const endpoint: RedisClusterEndpoint = {
      origin: 'local',
      flavor: `${flavor} cluster (${masters} masters, ${masters * replicas} replicas)`,
      nodes,
      urls: nodes.map((n) => `redis://${addressOf(n)}`),
      admin,
    };
    const cluster = new LocalRedisCluster(endpoint, instanceDir(runDir, 'redis-cluster'));
    try {
      await Promise.all(nodes.map((n) => cluster.launch(runDir, settings, n, options.nodeTimeoutMs ?? 2000)));
      await cluster.create(settings, replicas);
      await waitForClusterOk(endpoint);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  private async launch(
    runDir: RunDir,
    settings: TestBackendSettings,
    node: ClusterNodeAddress,
    nodeTimeoutMs: number,
  ): Promise<void> {
    const dir = join(this.dir, String(node.port));
    const { password } = this.endpoint.admin;
    const proc = new ManagedProcess(runDir, {
      command: settings.binaries.redisServer,
      args: [
        '--bind',
        node.host,
        '--port',
        String(node.port),
        '--dir',
        this.dir,
        '--dbfilename',
        `dump-${node.port}.rdb`,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${node.port}.conf`,
        '--cluster-node-timeout',
        String(nodeTimeoutMs),
        '--save',
        '',
        '--appendonly',
        'no',
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
      ],
      cwd: this.dir,
      logFile: `${dir}.log`,
    });
    this.processes.set(addressOf(node), proc);
    await this.started(node, proc);
  }

  private async started(node: ClusterNodeAddress, proc: ManagedProcess): Promise<void> {
    proc.start();
    const deadline = Date.now() + 15_000;
    for (;;) {
      const answered = await withNode(this.endpoint, node, (c) => c.ping()).then(
        () => true,
        () => false,
      );
      if (answered) return;
      if (!proc.running || Date.now() > deadline)
        throw new Error(`redis-server on ${addressOf(node)} did not start:\n${proc.logTail()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Stops one node and starts it again with its cluster config file kept (it rejoins as the
   * node it was) but no ACL users beyond `default` (the nodes keep no ACL file): what a
   * restarted node of an operator's cluster without `aclfile` looks like.
   */
  async restart(node: ClusterNodeAddress): Promise<void> {
    const proc = this.processes.get(addressOf(node));
    if (proc === undefined) throw new Error(`no node at ${addressOf(node)}`);
    await proc.stop(2000);
    await this.started(node, proc);
  }

  private async create(settings: TestBackendSettings, replicas: number): Promise<void> {
    await run(
      settings.binaries.redisCli,
      [
        '--cluster',
        'create',
        ...this.endpoint.nodes.map(addressOf),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      {
        env: childEnvironment({ REDISCLI_AUTH: this.endpoint.admin.password }),
        timeout: 30_000,
      },
    );
  }

  /** `kill -9` of one node: no goodbye to its clients or the cluster. */
  kill(node: ClusterNodeAddress): void {
    const proc = this.processes.get(addressOf(node));
    if (proc?.pid === undefined || !proc.running) throw new Error(`no running node at ${addressOf(node)}`);
    process.kill(proc.pid, 'SIGKILL');
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.processes.values()].map((p) => p.stop(2000)));
    this.processes.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
