/**
 * The connections every holdfast process (and the status) makes: the record store, and the queue's Redis for what
 * workers share.
 */
import type { RedisOptions } from 'ioredis';
import { MongoClient } from 'mongodb';
import type { HoldfastConfig } from '../config/config.js';
import { formatDuration } from '../config/duration.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { queueRedis, queueWhereOf, type QueueRedis } from '../queue/bull-connection.js';
import { NoteSeal, holdfastPrefix, type Coordination, type NoteKind } from '../queue/coordination.js';
import { RotationNotes } from '../queue/rotation-notes.js';
import { queuedChecks, queueKeysNamed, type QueuedChecks } from '../schedule/queued-checks.js';
import { holdfastQueueMetas, queueControlsRead, type QueueControlsRead } from '../queue/queue-controls.js';
import { queueCoordination, type QueueCoordination } from '../queue/sharded-coordination.js';
import { ConsumerStore } from '../store/consumer-store.js';
import { storeReason } from '../store/store-retry.js';

/**
 * Connects the record store, waiting for it up to `store.connectTimeout` (a store that starts
 * after holdfast is not an error); then fails naming the store and why.
 */
export async function connectStore(
  config: HoldfastConfig,
  options: { create?: boolean } = {},
): Promise<{ client: MongoClient; store: ConsumerStore }> {
  const { url, username, password, database, connectTimeoutMs } = config.store;
  const client = new MongoClient(url, {
    ...(username ? { auth: { username, password } } : {}),
    serverSelectionTimeoutMS: Math.min(10_000, connectTimeoutMs),
  });
  const deadline = Date.now() + connectTimeoutMs;
  try {
    for (;;) {
      try {
        await client.connect();
        break;
      } catch (error) {
        if (Date.now() + 500 >= deadline) {
          throw new HoldfastError(
            'STORE_UNAVAILABLE',
            `the record store at ${url} could not be reached within ${formatDuration(connectTimeoutMs)}: ${storeReason(error)}`,
            { cause: error },
          );
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    return { client, store: await ConsumerStore.open(client.db(database), options) };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/** The queue's Redis, for what workers share besides jobs: locks, revisions, what checks learned, pauses. */
export function connectCoordination(
  config: HoldfastConfig,
  options: RedisOptions = {},
  /** Told of each value in the queue's Redis whose seal fails (`note-seal.ts`). */
  onUnsealed?: (kind: NoteKind, field: string) => void,
): { redis: QueueRedis; coordination: QueueCoordination } {
  // commands issued in the same tick share one write: a check's claim and release are two of them
  const redis = queueRedis(config.queue.connection, {
    maxRetriesPerRequest: 2,
    enableAutoPipelining: true,
    ...options,
  });
  redis.on('error', () => undefined);
  return {
    redis,
    coordination: queueCoordination(redis, config.queue, new NoteSeal(config.fingerprintKey, onUnsealed)),
  };
}

/** The queue's Redis as the status names it: `redis://host:port/db` (or a cluster's nodes), without credentials. */
export function queueWhere(config: HoldfastConfig): string {
  return queueWhereOf(config.queue.connection);
}

/** The status's own connections: nothing waits for a server longer than `budgetMs`, and nothing is created. */
export interface StatusConnections {
  store: Pick<ConsumerStore, 'providerStatuses'>;
  coordination: Coordination;
  /** Whether silent consumers' checks are queued (a backlog), from the queue's jobs. */
  queued: QueuedChecks;
  /** What stops or throttles the queues (a pause, a global rate limit or concurrency). */
  controls: QueueControlsRead;
  /** The connections from before each consumer's rotation (`rotation-notes.ts`). */
  oldConnections: RotationNotes;
  close(): Promise<void>;
}

/**
 * Connections for one status read (`holdfast status`), each with deadlines within `budgetMs`:
 * server selection, connect, socket and command timeouts. The store is opened on its first
 * read; what a connection reports by itself (a refused connect) goes to `noteConnection`.
 */
export function statusConnections(
  config: HoldfastConfig,
  budgetMs: number,
  noteConnection: (dependency: 'store' | 'queue', error: unknown) => void,
): StatusConnections {
  const { url, username, password, database } = config.store;
  // a refused connect is told before the budget runs out; a server that does not answer is told by the budget
  const connectMs = Math.max(500, budgetMs - 1000);
  const client = new MongoClient(url, {
    ...(username ? { auth: { username, password } } : {}),
    serverSelectionTimeoutMS: connectMs,
    connectTimeoutMS: connectMs,
    socketTimeoutMS: budgetMs,
    maxPoolSize: 2,
  });
  client.on('serverHeartbeatFailed', (event) => noteConnection('store', event.failure));
  client.on('serverHeartbeatSucceeded', () => noteConnection('store', null));
  let opened: Promise<ConsumerStore> | undefined;
  // connected first, so that a store that does not answer fails as such (not as a retried read of a closed client)
  const open = async () => ConsumerStore.open((await client.connect()).db(database), { create: false });
  const store = { providerStatuses: async () => (await (opened ??= open())).providerStatuses() };
  const { redis, coordination } = connectCoordination(config, {
    maxRetriesPerRequest: 1,
    connectTimeout: connectMs,
    commandTimeout: budgetMs,
    retryStrategy: (n) => (n > 3 ? null : 200),
  });
  redis.on('error', (error: Error) => noteConnection('queue', error));
  // a cluster's node that fails is named: which master does not answer
  redis.on('node error', (error: Error, node: string) =>
    noteConnection('queue', new Error(`node ${node}: ${error.message}`)),
  );
  redis.on('ready', () => noteConnection('queue', null));
  return {
    store,
    coordination,
    // the jobs' keys as BullMQ names them, read without loading BullMQ
    queued: queuedChecks(redis, queueKeysNamed(config.queue.prefix, config.queue.name, config.queue.shards)),
    controls: queueControlsRead(redis, holdfastQueueMetas(config.queue.prefix, config.queue.name, config.queue.shards)),
    oldConnections: new RotationNotes(redis, holdfastPrefix(config.queue.prefix)),
    close: async () => {
      redis.disconnect();
      // closing ends sessions on the server: not waited for beyond a moment when it does not answer
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([client.close().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, 500)))]);
      clearTimeout(timer);
    },
  };
}
