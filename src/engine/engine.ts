/**
 * Wires one holdfast process from its resolved configuration: the record store, the queue and
 * what workers share in its Redis, the providers' adapters and machines, and the roles it runs
 * (worker; desired-state sync with the sweeper). Start-up is all or nothing: whatever fails,
 * everything started is closed again and the error is thrown.
 */
import { connectCoordination, connectStore } from './connect.js';
import { ConsumerWorker } from '../../workers/consumer-worker.js';
import { RoundWorker } from '../../workers/round-worker.js';
import { runConsumerJob } from '../../workers/consumer-job.js';
import { runRound, type RanEach } from '../../workers/round-checks.js';
import { DueWaits, type TakenWait } from '../schedule/due-waits.js';
import { createEffects, type Effects } from '../../workers/effects.js';
import { JobTrust } from '../../workers/job-trust.js';
import { ProviderRecovery } from '../../workers/provider-recovery.js';
import { ProviderSuspects } from '../../workers/provider-suspects.js';
import { providerRuntime, type ProviderRuntime } from '../../workers/provider-runtime.js';
import type { Adapter } from '../adapters/adapter.js';
import type { HoldfastConfig } from '../config/config.js';
import { configSecrets } from '../config/config-secrets.js';
import { DesiredSync } from '../desired/desired-sync.js';
import { FirstApplyReports } from '../status/first-apply-reports.js';
import { SecretWarnings } from '../secrets/secret-warnings.js';
import { boundHeapGrowth, releaseYoungGeneration } from './heap-growth.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import { ConsumerQueue } from '../schedule/consumer-queue.js';
import { JobSeal } from '../queue/job-seal.js';
import { queuedChecks, queueKeysOf, type QueuedChecks } from '../schedule/queued-checks.js';
import { holdfastPrefix } from '../queue/coordination.js';
import { watchQueue, type QueueWatch } from '../queue/queue-watch.js';
import {
  holdfastQueueMetas,
  QueueControls,
  queueControlsRead,
  type QueueControlsRead,
} from '../queue/queue-controls.js';
import { shardPrefixes } from '../config/shard-prefixes.js';
import type { Coordination, NoteKind } from '../queue/coordination.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import type { QueueCoordination } from '../queue/sharded-coordination.js';
import { ProviderGate } from '../../workers/provider-gate.js';
import { observedEffects } from '../../workers/observed-effects.js';
import type { Metrics } from '../metrics/metrics.js';
import { engineScrapeSources } from '../metrics/scrape-sources.js';
import { reportStoreSpeed } from '../store/store-speed.js';
import { Sweeper } from '../sweep/sweeper.js';
import { warnPublicRights } from './public-rights-warning.js';
import { startNodeNotes } from './node-notes.js';
import { OrphanWatch } from '../orphans/orphan-watch.js';
import { FailedLoginsWatch } from './failed-logins-watch.js';
import { OldConnectionsWatch } from '../old-connections/old-connections-watch.js';
import { failedLoginsSince } from '../queue/failed-logins-since.js';
import { RotationNotes } from '../queue/rotation-notes.js';
import { overlapEvidence } from '../../workers/overlap-evidence.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { StoreWatch } from '../store/store-watch.js';

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
  sweeper: Sweeper | undefined;
  worker: ConsumerWorker | undefined;
  /** Whether the record store answers, asked every second. */
  storeWatch: StoreWatch;
  /** Whether consumers' checks are still queued, for the status (see `queued-checks.ts`). */
  queued: QueuedChecks;
  /** What stops or throttles the queues from outside (a pause, a global rate limit), for the status. */
  controls: QueueControlsRead;
  /** Rotations and the connections from before them, for the status. */
  rotations: RotationNotes;
  /** Stops syncing, lets in-flight jobs finish, closes every connection. */
  stop(): Promise<void>;
}

export { connectCoordination, connectStore } from './connect.js';

/**
 * What was started, released in reverse order of starting, once (as graphile-worker's runner
 * keeps its releasers): each part pushes its release as it starts; a release that fails does
 * not keep the others from running.
 */
class Releasers {
  private readonly releases: Array<() => unknown> = [];
  private released: Promise<void> | undefined;

  push(release: () => unknown): void {
    this.releases.push(release);
  }

  release(): Promise<void> {
    this.released ??= (async () => {
      for (const release of this.releases.splice(0).reverse())
        await Promise.resolve()
          .then(release)
          .catch(() => undefined);
    })();
    return this.released;
  }
}

/** What every role of the process shares: the store, the queue, the queue's Redis, the providers. */
interface Shared {
  store: ConsumerStore;
  seal: JobSeal;
  queue: ConsumerQueue;
  /** Every consumer's wait, by when it falls due (see `due-waits.ts`). */
  due: DueWaits;
  coordination: QueueCoordination;
  storeWatch: StoreWatch;
  gate: ProviderGate;
  providers: ReadonlyMap<string, ProviderRuntime>;
  queued: QueuedChecks;
  /** The queue's Redis Cluster's failovers (one per shard; none for a single Redis). */
  queueWatch: QueueWatch[];
  /** What stops or throttles the queues from outside (`queue-controls.ts`). */
  controls: QueueControlsRead;
  /** Rotations and their old connections (`rotation-notes.ts`). */
  rotations: RotationNotes;
}

export async function startEngine(options: EngineOptions): Promise<Engine> {
  const now = options.now ?? (() => new Date());
  prepare(options);
  boundHeapGrowth();
  const releasers = new Releasers();
  try {
    const shared = await connectShared(options, now, releasers);
    const effects = startEffects(options, shared, now, releasers);
    // made before the worker, which asks it to check the queue; started after it, with the sync
    const sweeper = options.roles.sync ? newSweeper(options, shared, now) : undefined;
    if (sweeper) for (const watch of shared.queueWatch) watch.onMoved(() => sweeper.sweep());
    const suspects = options.roles.worker ? startSuspects(options, shared, now, releasers) : undefined;
    const worker = options.roles.worker
      ? startWorker(options, shared, effects, sweeper, now, releasers, suspects)
      : undefined;
    const sync = sweeper ? await startSync(options, shared, sweeper, now, releasers) : undefined;
    // the start-up's peak is behind (its contributions read and delivered): checks and heals get V8's young generation
    releaseYoungGeneration();
    const { store, queue, coordination, providers, storeWatch, queued, controls, rotations } = shared;
    return {
      store,
      queue,
      coordination,
      providers,
      sync,
      sweeper,
      worker,
      storeWatch,
      queued,
      controls,
      rotations,
      stop: () => releasers.release(),
    };
  } catch (error) {
    await releasers.release();
    throw error;
  }
}

/**
 * The scrubber learns every configured secret (and the forms adapters derive from them); adopting providers are warned
 * of.
 */
function prepare({ config, logger, scrubber }: EngineOptions): void {
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
}

/**
 * A process without the sync refuses to start on another `queue.shards` than the queue's Redis
 * was last set up for (by the process that runs the sync): its workers would take other shards'
 * queues and other locks than the rest, and one consumer could be checked twice at once.
 */
async function sameShards(config: HoldfastConfig, coordination: QueueCoordination): Promise<void> {
  const { shards } = await coordination.layout.recordedLayout();
  if (shards === config.queue.shards) return;
  throw new HoldfastError(
    'CONFIG_INVALID',
    `queue.shards is ${config.queue.shards} here, but the queue's Redis is set up for ${shards}: every holdfast process must use the same queue.shards; to change it, stop them all, change it everywhere, and start holdfast run first`,
  );
}

/**
 * What the engine does with a value in the queue's Redis that holdfast did not write (its seal fails): read as absent;
 * said once per kind, then counted (`holdfast_unsealed_notes_total`).
 */
function unsealedNotes(logger: Logger, metrics: Metrics | undefined): (kind: NoteKind, field: string) => void {
  const told = new Set<NoteKind>();
  return (kind, field) => {
    metrics?.unsealedNote(kind);
    if (told.has(kind)) return;
    told.add(kind);
    logger.warn(
      { kind, field },
      `a value in the queue's Redis that holdfast did not write (a ${kind} of ${field}: its seal fails): taken as absent; ` +
        'written there by another who can write that Redis, or by a release before seals (noted again as the consumers are checked and swept); further ones are counted (holdfast_unsealed_notes_total)',
    );
  };
}

async function connectShared(
  { config, logger, adapters, roles, metrics }: EngineOptions,
  now: () => Date,
  releasers: Releasers,
): Promise<Shared> {
  const { client, store } = await connectStore(config);
  releasers.push(() => client.close());
  void reportStoreSpeed(client.db(config.store.database), config.store.url, logger); // once: a warning when slow per operation
  const seal = new JobSeal(config.fingerprintKey);
  const queue = new ConsumerQueue({ ...config.queue, seal });
  releasers.push(() => queue.close());
  const { redis, coordination } = connectCoordination(config, {}, unsealedNotes(logger, metrics));
  releasers.push(() => redis.disconnect());
  if (!roles.sync) await sameShards(config, coordination);
  // every key of a shard shares its prefix's hash tag, so the slot of its namespace is theirs
  const queueWatch = shardPrefixes(config.queue.prefix, config.queue.shards).flatMap(
    (prefix) => watchQueue(redis, { key: holdfastPrefix(prefix), logger }) ?? [],
  );
  const storeWatch = new StoreWatch(client.db(config.store.database), {
    where: config.store.url,
    logger,
    now,
    publish: (outage) =>
      coordination.signals.setStoreOutage(outage && { since: outage.since.toISOString(), reason: outage.reason }),
  });
  storeWatch.start();
  releasers.push(() => storeWatch.stop());
  const providers = new Map(config.providers.map((p) => [p.name, providerRuntime(p, adapters?.get(p.name))]));
  releasers.push(() => Promise.allSettled([...providers.values()].map((p) => p.adapter.close())));
  // a backend of several nodes says what changes among them (a node that cannot be asked, a failover), once each
  for (const [provider, { adapter }] of providers) {
    const stop = adapter.onNodeEvent?.(({ level, message, node }) =>
      logger[level]({ provider, ...(node !== undefined ? { node } : {}) }, message),
    );
    if (stop) releasers.push(() => Promise.resolve(stop()));
  }
  // and notes them for `holdfast status`, which runs elsewhere
  const stopNoting = startNodeNotes({
    providers: [...providers].map(([name, { adapter }]) => ({ name, adapter })),
    notes: coordination.notes,
    logger,
  });
  releasers.push(() => Promise.resolve(stopNoting()));
  // what PUBLIC holds beyond each provider's policy (PostgreSQL), said once at start by the process that runs the sync
  if (roles.sync) void warnPublicRights(providers, logger);
  const queued = queuedChecks(redis, queueKeysOf(config.queue.prefix, queue.queues));
  const due = new DueWaits(redis, config.queue, seal);
  const controls = queueControlsRead(
    redis,
    holdfastQueueMetas(config.queue.prefix, config.queue.name, config.queue.shards),
  );
  return {
    store,
    seal,
    queue,
    due,
    coordination,
    storeWatch,
    gate: new ProviderGate(coordination.signals),
    providers,
    queued,
    queueWatch,
    controls,
    rotations: new RotationNotes(redis, holdfastPrefix(config.queue.prefix)),
  };
}

/**
 * The effects workers perform, told to the providers' recovery (and the metrics, which also read the consumers when
 * scraped).
 */
function startEffects(
  { config, logger, scrubber, metrics }: EngineOptions,
  { coordination, queue, due, gate, store, storeWatch, providers, rotations }: Shared,
  now: () => Date,
  releasers: Releasers,
): Effects {
  const verifyEveryMs = new Map(config.providers.map((p) => [p.name, p.timing.verifyEveryMs]));
  const recovery = new ProviderRecovery({ coordination, queue, verifyEveryMs, logger });
  releasers.push(() => recovery.stop());
  const effects = createEffects({
    fingerprintKey: config.fingerprintKey,
    gate,
    scrubber,
    now,
    answeredAgain: (name) => recovery.answeredAgain(name),
    couldNotAsk: (name) => recovery.couldNotAsk(name),
    secretFindings: new SecretWarnings(logger).heed,
    rotated: (provider, key, login, at) => rotations.noteRotation(provider, key, { login, at }),
    overlap: overlapEvidence(rotations, (key, since) => failedLoginsSince(coordination.notes, key, since)),
    ...(metrics
      ? { batched: (name: string, call: 'create' | 'holds', size: number) => metrics.batched(name, call, size) }
      : {}),
  });
  if (!metrics) return effects;
  const nodesOf = (name: string) => {
    const adapter = providers.get(name)?.adapter;
    return adapter?.nodeReport ? () => adapter.nodeReport!() : undefined;
  };
  metrics.scrapeFrom(
    engineScrapeSources({
      coordination,
      queue,
      due,
      store,
      providers: config.providers,
      storeUp: () => storeWatch.down === null,
      nodesOf,
    }),
  );
  return observedEffects(effects, metrics);
}

/**
 * Each provider's node events (a node seen as a new incarnation) make its consumers suspect, their waits brought
 * forward (rule 13): a worker's part, so that a process that asks nothing reads no incarnation.
 */
function startSuspects(
  { logger, metrics }: EngineOptions,
  { coordination, queue, providers }: Shared,
  now: () => Date,
  releasers: Releasers,
): ProviderSuspects {
  const startRounds = async () => {
    await Promise.all(queue.rounds.queues.map((_, shard) => queue.rounds.add(shard)));
  };
  const nodeOf = (provider: string) => {
    const nodes = [...(providers.get(provider)?.adapter.incarnations?.().keys() ?? [])];
    return nodes.length === 1 ? nodes[0] : undefined;
  };
  const suspects = new ProviderSuspects({
    coordination,
    startRounds,
    nodeOf,
    logger,
    now,
    ...(metrics ? { observer: metrics } : {}),
  });
  releasers.push(() => suspects.stop());
  for (const [provider, { adapter }] of providers) {
    const stop = adapter.onIncarnation?.((change) => suspects.nodeChanged(provider, change));
    if (stop) releasers.push(() => Promise.resolve(stop()));
  }
  return suspects;
}

/**
 * How many due waits a worker process runs at once, per job it runs at once (`worker.concurrency`): a routine check
 * mostly waits on Redis. 16 (512 at the default concurrency: 4 rounds of 128 per shard): against 8, at 4,000
 * consumers asking 16,000 checks/s on a loaded machine, 1.49 times the checks a second at the same CPU per check, and
 * each round's BullMQ job shared by twice the checks (`npx tsx test/bench/check-rate.ts 4000 250ms`).
 */
const DUE_PER_JOB = 16;

function startWorker(
  options: EngineOptions,
  shared: Shared,
  effects: Effects,
  sweeper: Sweeper | undefined,
  now: () => Date,
  releasers: Releasers,
  suspects: ProviderSuspects | undefined,
): ConsumerWorker {
  const { config, logger, scrubber, metrics } = options;
  const { store, queue, due, coordination, providers, storeWatch, seal } = shared;
  /**
   * A worker's error explained by the queue having forgotten everything: the sweeper (in this process) sees to it now.
   */
  const queueForgot = async (): Promise<boolean> => {
    const forgot = await coordination.signals.forgot();
    if (forgot) void sweeper?.checkQueue().catch(() => undefined);
    return forgot;
  };
  const job = {
    store,
    waits: due,
    coordination,
    providers,
    effects,
    trust: new JobTrust(seal, logger, metrics),
    logger,
    now,
    storeDown: () => storeWatch.down !== null,
    ...(metrics ? { observer: metrics } : {}),
    ...(suspects
      ? {
          onLossWave: (provider: string, node: string | undefined, since: number) =>
            suspects.lossWave(provider, node, since),
        }
      : {}),
  };
  const worker = new ConsumerWorker(
    job,
    { ...config.queue, concurrency: config.worker.concurrency, scrubber, queueForgot, waits: due },
    logger,
  );
  releasers.push(() => worker.close());
  const rounds = {
    due,
    queue,
    run: (taken: TakenWait['job']) => runConsumerJob(taken, job),
    runMany: (jobs: ReadonlyArray<TakenWait['job']>, ran: RanEach) => runRound(jobs, job, ran),
    jobsSaturated: () => worker.saturated,
  };
  const roundWorker = new RoundWorker({
    ...config.queue,
    rounds,
    limit: config.worker.concurrency * DUE_PER_JOB,
    queues: queue.rounds,
    logger,
    scrubber,
    queueForgot,
  });
  releasers.push(() => roundWorker.close());
  return worker;
}

/**
 * The sweeper; at each check of the queue it undoes what stops or throttles holdfast's queues from outside
 * (`queue-controls.ts`), counted in the metrics.
 */
function newSweeper({ config, logger, metrics }: EngineOptions, shared: Shared, now: () => Date): Sweeper {
  const { store, queue, due, coordination } = shared;
  const timing = new Map(config.providers.map((p) => [p.name, p.timing]));
  const bullQueues = [...queue.queues, ...queue.rounds.queues];
  const controls = new QueueControls({
    read: shared.controls,
    queues: new Map(bullQueues.map((q) => [`${q.opts.prefix}:${q.name}`, q])),
    logger,
    ...(metrics ? { undone: (q: string, control: string) => metrics.queueControlUndone(q, control) } : {}),
  });
  return new Sweeper({
    store,
    queue,
    waits: due,
    coordination,
    timing,
    controls,
    logger,
    now,
    sentinelEveryMs: config.sync.sentinelEveryMs,
    sweepEveryMs: config.sync.sweepEveryMs,
  });
}

/**
 * The desired-state sync, after one read of every record (what the sync delivered, every job the queue may have lost);
 * then the sweeper and the orphan watch.
 */
async function startSync(
  { config, logger, scrubber, metrics }: EngineOptions,
  shared: Shared,
  sweeper: Sweeper,
  now: () => Date,
  releasers: Releasers,
): Promise<DesiredSync> {
  const { store, queue, coordination, providers, storeWatch } = shared;
  const desired = new DesiredSync({
    store,
    queue,
    confirmations: coordination.notes,
    providers: config.providers,
    logger,
    now,
    pollEveryMs: config.sync.pollEveryMs,
  });
  releasers.push(() => desired.stop());
  releasers.push(() => sweeper.stop());
  // a changed queue.shards clears the entries left in shards that are no longer their consumers'; the sweep notes them
  // again
  const layout = await coordination.layout.settleLayout(config.providers.map((p) => p.name));
  if (layout)
    logger.info(
      { shards: layout.to.shards },
      `queue shards: ${layout.to.shards} (the queue's Redis knew ${layout.from.shards}); ${layout.reset} shard(s) cleared of what consumers of another layout left, every consumer's next step re-created in its own shard`,
    );
  // a queue paused or limited while holdfast was down runs again before anything is delivered to it
  await sweeper.undoControls();
  await sweeper.sweep((record) => desired.remember(record));
  await desired.start();
  sweeper.start(desired);
  // long first applies said as they go, a line every few seconds, for every worker at once
  const firstApplies = new FirstApplyReports({
    notes: coordination.notes,
    declared: () => desired.declaredCounts(),
    logger,
  });
  firstApplies.start();
  releasers.push(() => firstApplies.stop());
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
  releasers.push(() => orphans.stop());
  // the consumer's side: failed logins read from each backend's log, attributed to the consumers that claim the login
  const failedLogins = new FailedLoginsWatch({
    providers: [...providers.values()],
    owners: (name) => desired.loginOwners(name),
    notes: coordination.notes,
    logger,
    scrubber,
    ...(metrics ? { counted: (name: string, a: number, u: number) => metrics.failedLogins(name, a, u) } : {}),
    paused: () => storeWatch.down !== null,
    now,
    rotations: (name) => shared.rotations.rotations(name),
  });
  failedLogins.start();
  releasers.push(() => failedLogins.stop());
  const oldConnections = new OldConnectionsWatch({
    providers: [...providers.values()],
    notes: shared.rotations,
    logger,
    scrubber,
    paused: () => storeWatch.down !== null,
    now,
  });
  oldConnections.start();
  releasers.push(() => oldConnections.stop());
  return desired;
}
