/**
 * Wires one holdfast process from its resolved configuration: the record store, the queue and
 * what workers share in its Redis, the providers' adapters and machines, and the roles it runs
 * (worker; desired-state sync with the resync). Start-up is all or nothing: whatever fails,
 * everything started is closed again and the error is thrown.
 */
import { connectCoordination, connectStore } from './connect.js';
import { ConsumerWorker } from '../../workers/consumer-worker.js';
import { createEffects } from '../../workers/effects.js';
import { JobTrust } from '../../workers/job-trust.js';
import { ProviderRecovery } from '../../workers/provider-recovery.js';
import { providerRuntime, type ProviderRuntime } from '../../workers/provider-runtime.js';
import type { Adapter } from '../adapters/adapter.js';
import type { HoldfastConfig } from '../config/config.js';
import { configSecrets } from '../config/config-secrets.js';
import { DesiredSync } from '../desired/desired-sync.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import { ConsumerQueue } from '../queue/consumer-queue.js';
import { JobSeal } from '../queue/job-seal.js';
import type { Coordination } from '../queue/coordination.js';
import { ProviderGate } from '../../workers/provider-gate.js';
import { observedEffects } from '../../workers/observed-effects.js';
import type { Metrics } from '../metrics/metrics.js';
import { engineScrapeSources } from '../metrics/scrape-sources.js';
import { Resync } from '../resync/resync.js';
import { OrphanWatch } from '../orphans/orphan-watch.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { StoreWatch } from '../store/store-watch.js';
import { reportStoreSpeed } from '../store/store-speed.js';

export interface EngineOptions {
  config: HoldfastConfig;
  logger: Logger;
  /** Knows the admin passwords; effects extend it with the grant secret they read. */
  scrubber: Scrubber;
  roles: { sync: boolean; worker: boolean };
  /** Adapters to use instead of connecting the configured ones, by provider name (tests). */
  adapters?: ReadonlyMap<string, Adapter>;
  now?: () => Date;
  /** Counts work as it happens, and reads the consumers and the queue when scraped (`/metrics`). */
  metrics?: Metrics;
}

export interface Engine {
  store: ConsumerStore;
  queue: ConsumerQueue;
  coordination: Coordination;
  providers: ReadonlyMap<string, ProviderRuntime>;
  sync: DesiredSync | undefined;
  resync: Resync | undefined;
  worker: ConsumerWorker | undefined;
  /** Whether the record store answers, asked every second. */
  storeWatch: StoreWatch;
  /** Stops syncing, lets in-flight jobs finish, closes every connection. */
  stop(): Promise<void>;
}

export { connectCoordination, connectStore } from './connect.js';

export async function startEngine(options: EngineOptions): Promise<Engine> {
  const { config, logger, scrubber } = options;
  const now = options.now ?? (() => new Date());
  scrubber.add(...configSecrets(config));
  // each adapter's derived forms of a password (Redis: its SHA-256) are scrubbed wherever a password is
  scrubber.learn(...config.providers.flatMap((p) => (p.adapter.secretForms ? [p.adapter.secretForms] : [])));
  for (const p of config.providers.filter((provider) => provider.adopt)) {
    logger.warn(
      { provider: p.name },
      `provider ${p.name} has adopt: true: it takes over logins on its backend that it did not make (that carry no mark of its own), ` +
        'giving them the password and rights its consumers declare; set adopt: false once they are marked',
    );
  }
  const closing: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const step of closing.splice(0).reverse()) await step().catch(() => undefined);
  };

  try {
    const { client, store } = await connectStore(config);
    closing.push(() => client.close());
    void reportStoreSpeed(client.db(config.store.database), config.store.url, logger); // once: a warning when slow per operation
    const seal = new JobSeal(config.fingerprintKey);
    const queue = new ConsumerQueue({ ...config.queue, seal });
    closing.push(() => queue.close());
    const { redis, coordination } = connectCoordination(config);
    const storeWatch = new StoreWatch(client.db(config.store.database), {
      where: config.store.url,
      logger,
      now,
      publish: (outage) => coordination.setStoreOutage(outage && { since: outage.since.toISOString(), reason: outage.reason }),
    });
    storeWatch.start();
    const gate = new ProviderGate(coordination);
    closing.push(() => Promise.resolve(redis.disconnect()));
    closing.push(() => Promise.resolve(storeWatch.stop()));
    const providers = new Map(
      config.providers.map((p) => [p.name, providerRuntime(p, options.adapters?.get(p.name))]),
    );
    closing.push(() => Promise.allSettled([...providers.values()].map((p) => p.adapter.close())));

    const recovery = new ProviderRecovery({
      coordination,
      queue,
      verifyEveryMs: new Map(config.providers.map((p) => [p.name, p.timing.verifyEveryMs])),
      logger,
    });
    closing.push(() => Promise.resolve(recovery.stop()));

    let effects = createEffects({
      fingerprintKey: config.fingerprintKey,
      gate,
      scrubber,
      now,
      answeredAgain: (name) => recovery.answeredAgain(name),
      couldNotAsk: (name) => recovery.couldNotAsk(name),
    });
    const { metrics } = options;
    if (metrics) {
      effects = observedEffects(effects, metrics);
      metrics.scrapeFrom(engineScrapeSources({ coordination, queue, store, providers: config.providers, storeUp: () => storeWatch.down === null }));
    }

    let resync: Resync | undefined;
    /** A worker's error explained by the queue having forgotten everything: the resync (in this process) sees to it now. */
    const queueForgot = async (): Promise<boolean> => {
      const forgot = await coordination.forgot();
      if (forgot) void resync?.checkQueue().catch(() => undefined);
      return forgot;
    };
    const worker = options.roles.worker
      ? new ConsumerWorker(
          { store, queue, coordination, providers, effects, trust: new JobTrust(seal, logger, metrics), logger, now, storeDown: () => storeWatch.down !== null, ...(metrics ? { observer: metrics } : {}) },
          { ...config.queue, concurrency: config.worker.concurrency, scrubber, queueForgot },
          logger,
        )
      : undefined;
    if (worker) closing.push(() => worker.close());

    let sync: DesiredSync | undefined;
    if (options.roles.sync) {
      const desired = new DesiredSync({ store, queue, confirmations: coordination, providers: config.providers, logger, now, pollEveryMs: config.sync.pollEveryMs });
      closing.push(() => desired.stop());
      const again = new Resync({
        store,
        queue,
        coordination,
        timing: new Map(config.providers.map((p) => [p.name, p.timing])),
        logger,
        now,
        resyncEveryMs: config.sync.resyncEveryMs,
        sweepEveryMs: config.sync.sweepEveryMs,
      });
      closing.push(() => again.stop());
      // one read of every record at start-up: what the sync delivered, and every job the queue may have lost
      await again.sweep((record) => desired.remember(record));
      await desired.start();
      again.start();
      const orphans = new OrphanWatch({
        providers: [...providers.values()],
        claimed: (name) => desired.claimedLogins(name),
        coordination,
        logger,
        scrubber,
        paused: () => storeWatch.down !== null,
        now,
      });
      orphans.start();
      closing.push(() => orphans.stop());
      sync = desired;
      resync = again;
    }

    return {
      store,
      queue,
      coordination,
      providers,
      sync,
      resync,
      worker,
      storeWatch,
      stop: close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
