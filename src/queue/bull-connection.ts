/**
 * Every connection to the queue's Redis is made here: BullMQ's, the coordination's, the
 * status's and the doctor's. The queue's Redis is one server (`queue.url`) or a Redis Cluster
 * (`queue.cluster`, an ioredis `Cluster`, as BullMQ's docs describe): the same code runs on
 * both, as every key holdfast and BullMQ use shares the prefix's hash tag, so one slot.
 */
import type { ConnectionOptions } from 'bullmq';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  isRedisCluster,
  type QueueConnectionConfig,
  type RedisClusterConfig,
  type RedisConnectionConfig,
} from '../config/config.js';

/** A connection to the queue's Redis: one server's client, or a Redis Cluster's. */
export type QueueRedis = Redis | Cluster;

/**
 * How a cluster's client rides out a failover: a command to a master that died is tried again
 * (after a slot refresh) every 250 ms, up to 40 times (10 s): long enough for a replica to be
 * promoted under a short `cluster-node-timeout`; past it, the command fails and its caller's
 * own retry takes over (BullMQ's, a job put back).
 */
const RIDE_OUT: ClusterOptions = {
  retryDelayOnFailover: 250,
  retryDelayOnClusterDown: 250,
  retryDelayOnTryAgain: 250,
  maxRedirections: 40,
};

interface ServerOptions {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: object;
}

/** The credentials and TLS of a server or of every node of a cluster, without fields left undefined. */
function access(c: QueueConnectionConfig): Pick<ServerOptions, 'username' | 'password' | 'tls'> {
  return {
    ...(c.username === undefined ? {} : { username: c.username }),
    ...(c.password === undefined ? {} : { password: c.password }),
    ...(c.tls ? { tls: {} } : {}),
  };
}

/**
 * A blocking read (BullMQ's BZPOPMIN, for its next job) gives up client-side this long after
 * its own timeout (ioredis's `blockingTimeout`): without it, a read queued for a master that died
 * mid-failover can wait forever, and the worker with it, taking no job again.
 */
const BLOCKING_TIMEOUT_MS = 10_000;

function serverOptions(c: RedisConnectionConfig): ServerOptions {
  return { host: c.host, port: c.port, db: c.db, ...access(c) };
}

function clusterOf(c: RedisClusterConfig, options: RedisOptions): Cluster {
  const { retryStrategy, enableAutoPipelining, lazyConnect, ...perNode } = options;
  return new Cluster(
    c.nodes.map(({ host, port }) => ({ host, port })),
    {
      ...RIDE_OUT,
      redisOptions: { ...access(c), ...perNode },
      ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      // a cluster's nodes are not retried one by one: the cluster reconnects as a whole
      ...(retryStrategy ? { clusterRetryStrategy: (times: number) => retryStrategy(times) ?? null } : {}),
    },
  );
}

/**
 * A new connection to the queue's Redis with `options` (ioredis's; on a cluster each node gets
 * them, and `retryStrategy`, `enableAutoPipelining` and `lazyConnect` apply to the cluster).
 */
export function queueRedis(c: QueueConnectionConfig, options: RedisOptions = {}): QueueRedis {
  return isRedisCluster(c) ? clusterOf(c, options) : new Redis({ ...serverOptions(c), ...options });
}

/** BullMQ's connection and what ends it once BullMQ is closed. */
export interface BullConnection {
  connection: ConnectionOptions;
  /** Ends the connection holdfast made for BullMQ (a cluster's); nothing for options, whose connections BullMQ ends. */
  end(): void;
}

/**
 * BullMQ's connection (workers need `maxRetriesPerRequest: null`): for one server, options
 * (BullMQ makes and ends its connections); for a cluster, a `Cluster` BullMQ shares (a worker
 * duplicates it for its blocking reads) and the caller ends after closing BullMQ.
 */
export function bullConnection(c: QueueConnectionConfig): BullConnection {
  if (!isRedisCluster(c))
    return { connection: { ...serverOptions(c), maxRetriesPerRequest: null }, end: () => undefined };
  const cluster = clusterOf(c, { maxRetriesPerRequest: null, blockingTimeout: BLOCKING_TIMEOUT_MS });
  return { connection: cluster, end: () => cluster.disconnect() };
}

/**
 * The queue's Redis as logs and the status name it: `redis://host:port/db`, or `redis cluster redis://a:p,redis://b:q`,
 * without credentials.
 */
export function queueWhereOf(c: QueueConnectionConfig): string {
  const scheme = c.tls ? 'rediss' : 'redis';
  const hostPort = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (isRedisCluster(c)) return `cluster ${c.nodes.map((n) => `${scheme}://${hostPort(n.host, n.port)}`).join(',')}`;
  return `${scheme}://${hostPort(c.host, c.port)}/${c.db}`;
}
