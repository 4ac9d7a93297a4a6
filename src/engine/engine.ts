/**
 * Wires one holdfast process from its resolved configuration: the record store, the queue,
 * the providers' adapters and machines, and the roles it runs (desired-state sync, worker).
 */
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import type { Adapter } from '../adapters/adapter.js';
import type { HoldfastConfig } from '../config/config.js';
import { DesiredSync } from '../desired/desired-sync.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import { bullConnection, ConsumerQueue } from '../queue/consumer-queue.js';
import { ProviderGate } from '../queue/provider-gate.js';
import { ConsumerStore } from '../store/consumer-store.js';
import { ConsumerLocks } from '../queue/consumer-lock.js';
import { ConsumerWorker } from '../../workers/consumer-worker.js';
import { createEffects, type Effects } from '../../workers/effects.js';
import { providerRuntime, type ProviderRuntime } from '../../workers/provider-runtime.js';

export interface EngineOptions {
  config: HoldfastConfig;
  logger: Logger;
  /** Knows the admin passwords; effects extend it with the grant secret they read. */
  scrubber: Scrubber;
  roles: { sync: boolean; worker: boolean };
  /** Adapters to use instead of connecting the configured ones, by provider name (tests). */
  adapters?: ReadonlyMap<string, Adapter>;
  /** Wraps the effects (tests observe them). */
  wrapEffects?: (effects: Effects) => Effects;
  now?: () => Date;
}

export interface Engine {
  store: ConsumerStore;
  queue: ConsumerQueue;
  gate: ProviderGate;
  providers: ReadonlyMap<string, ProviderRuntime>;
  sync: DesiredSync | undefined;
  worker: ConsumerWorker | undefined;
  /** Stops syncing, lets in-flight jobs finish, closes every connection. */
  stop(): Promise<void>;
}

/** Registers every admin secret the configuration holds with the scrubber. */
export function scrubConfigSecrets(config: HoldfastConfig, scrubber: Scrubber): void {
  const secrets = [config.queue.connection.password, config.store.password, ...config.providers.map((p) => p.admin.password)];
  scrubber.add(...secrets.filter((s): s is string => typeof s === 'string' && s.length > 0));
}

export function connectStore(config: HoldfastConfig): { client: MongoClient; store: ConsumerStore } {
  const { url, username, password, database } = config.store;
  const client = new MongoClient(url, {
    ...(username ? { auth: { username, password } } : {}),
    serverSelectionTimeoutMS: 10_000,
  });
  return { client, store: new ConsumerStore(client.db(database)) };
}

/** The queue's Redis, for what workers share besides jobs: consumer locks and provider pauses. */
export function connectCoordination(config: HoldfastConfig): { redis: Redis; gate: ProviderGate; locks: ConsumerLocks } {
  const redis = new Redis({ ...bullConnection(config.queue.connection), maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined);
  const prefix = `${config.queue.prefix}:holdfast`;
  return { redis, gate: new ProviderGate(redis, prefix), locks: new ConsumerLocks(redis, prefix) };
}

export async function startEngine(options: EngineOptions): Promise<Engine> {
  const { config, logger, scrubber } = options;
  const now = options.now ?? (() => new Date());
  scrubConfigSecrets(config, scrubber);

  const { client, store } = connectStore(config);
  await client.connect();
  await store.ensureIndexes();
  const queue = new ConsumerQueue(config.queue);
  const { redis, gate, locks } = connectCoordination(config);
  const providers = new Map(
    config.providers.map((p) => [p.name, providerRuntime(p, options.adapters?.get(p.name) ?? p.adapter.connect(p.admin))]),
  );

  let effects = createEffects({ fingerprintKey: config.fingerprintKey, gate, scrubber, now });
  if (options.wrapEffects) effects = options.wrapEffects(effects);

  const worker = options.roles.worker
    ? new ConsumerWorker(
        { store, queue, locks, providers, effects, logger, now },
        { ...config.queue, concurrency: config.worker.concurrency, scrubber },
        logger,
      )
    : undefined;

  const sync = options.roles.sync
    ? new DesiredSync({
        store,
        queue,
        providers: [...providers.values()],
        logger,
        now,
        pollEveryMs: config.sync.pollEveryMs,
        resyncEveryMs: config.sync.resyncEveryMs,
      })
    : undefined;
  await sync?.start();

  return {
    store,
    queue,
    gate,
    providers,
    sync,
    worker,
    async stop() {
      await sync?.stop();
      await worker?.close();
      await queue.close();
      redis.disconnect();
      await Promise.allSettled([...providers.values()].map((p) => p.adapter.close()));
      await client.close();
    },
  };
}
