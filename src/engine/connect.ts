/** The connections every holdfast process (and the status) makes: the record store, and the queue's Redis for what workers share. */
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import type { HoldfastConfig } from '../config/config.js';
import { formatDuration } from '../config/duration.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { bullConnection } from '../queue/bull-connection.js';
import { createCoordination, holdfastPrefix, type Coordination } from '../queue/coordination.js';
import { ConsumerStore } from '../store/consumer-store.js';
import { storeReason } from '../store/store-retry.js';

/**
 * Connects the record store, waiting for it up to `store.connectTimeout` (a store that starts
 * after holdfast is not an error); then fails naming the store and why.
 */
export async function connectStore(config: HoldfastConfig, options: { create?: boolean } = {}): Promise<{ client: MongoClient; store: ConsumerStore }> {
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
          throw new HoldfastError('STORE_UNAVAILABLE', `the record store at ${url} could not be reached within ${formatDuration(connectTimeoutMs)}: ${storeReason(error)}`, { cause: error });
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
export function connectCoordination(config: HoldfastConfig): { redis: Redis; coordination: Coordination } {
  // commands issued in the same tick share one write: a check's claim and release are two of them
  const redis = new Redis({ ...bullConnection(config.queue.connection), maxRetriesPerRequest: 2, enableAutoPipelining: true });
  redis.on('error', () => undefined);
  return { redis, coordination: createCoordination(redis, holdfastPrefix(config.queue.prefix)) };
}

