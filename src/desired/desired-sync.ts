/**
 * Desired-state sync: reads each provider's contributions file when it changes (and on a
 * slow poll), writes what it declares into the records and nudges a worker for each
 * consumer whose desired spec changed. A file that does not validate changes nothing.
 *
 * Resync: the queue's Redis may forget jobs. Every record knows its next due time; any
 * record overdue has its timer job (or a resume job) re-created, and any desired spec
 * not yet delivered is nudged again. Job ids are deterministic, so this never doubles a job.
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { initialTransition } from 'xstate';
import { EFFECT_STATES } from '../../machines/consumer-machine.js';
import type { ProviderRuntime } from '../../workers/provider-runtime.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import type { Logger } from '../logging/logger.js';
import type { ConsumerQueue } from '../queue/consumer-queue.js';
import type { DesiredSpec } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import { sha256Hex } from './canonical-json.js';
import { loadContributions } from './load-contributions.js';

export interface DesiredSyncOptions {
  store: ConsumerStore;
  queue: ConsumerQueue;
  providers: ProviderRuntime[];
  logger: Logger;
  now: () => Date;
  pollEveryMs: number;
  resyncEveryMs: number;
}

/** A record whose next step is this late is assumed to have lost its job. */
const OVERDUE_SLACK_MS = 2000;
const RESYNC_BATCH = 5000;

interface FileSeen {
  signature: string;
  error: string | null;
}

export class DesiredSync {
  private readonly seen = new Map<string, FileSeen>();
  private readonly watchers: FSWatcher[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(private readonly options: DesiredSyncOptions) {}

  /** Reads every contributions file once, re-creates lost jobs, then keeps watching. */
  async start(): Promise<void> {
    for (const provider of this.options.providers) await this.syncProvider(provider, true);
    await this.resync();
    for (const provider of this.options.providers) {
      const path = provider.config.contributionsPath;
      try {
        const watcher = watch(dirname(path), (_event, file) => {
          if (file === null || file === basename(path)) void this.schedule(provider);
        });
        watcher.on('error', () => undefined);
        this.watchers.push(watcher);
      } catch {
        // the directory may not exist yet; the poll covers it
      }
    }
    this.timers.push(
      setInterval(() => {
        for (const provider of this.options.providers) void this.schedule(provider);
      }, this.options.pollEveryMs),
      setInterval(() => {
        void this.resync().catch((error: unknown) => this.options.logger.error({ err: String(error) }, 'resync failed'));
      }, this.options.resyncEveryMs),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const watcher of this.watchers) watcher.close();
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled(this.running.values());
  }

  /** One sync per provider at a time; a request during a sync runs after it. */
  private schedule(provider: ProviderRuntime): Promise<void> {
    const name = provider.config.name;
    const previous = this.running.get(name) ?? Promise.resolve();
    const next = previous
      .then(() => (this.stopped ? undefined : this.syncProvider(provider, false)))
      .catch((error: unknown) => this.options.logger.error({ provider: name, err: String(error) }, 'sync failed'));
    this.running.set(name, next);
    return next;
  }

  private async signature(path: string): Promise<string> {
    try {
      const s = await stat(path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (error) {
      return `missing:${(error as NodeJS.ErrnoException).code ?? ''}`;
    }
  }

  /** Reads the provider's contributions (when changed, or when `force`) and records what they declare. */
  async syncProvider(provider: ProviderRuntime, force: boolean): Promise<void> {
    const { store, queue, logger, now } = this.options;
    const name = provider.config.name;
    const path = provider.config.contributionsPath;
    const signature = await this.signature(path);
    const seen = this.seen.get(name);
    if (!force && seen?.signature === signature) return;

    let state;
    try {
      state = await loadContributions(provider.config);
    } catch (error) {
      if (!isHoldfastError(error, 'CONTRIBUTIONS_INVALID')) throw error;
      if (seen?.error !== error.message) {
        logger.error({ provider: name, file: path }, `contributions refused; the last good desired state stays in force:\n${error.message}`);
        const previous = (await store.providerStatuses()).find((p) => p._id === name);
        await store.setProviderStatus({
          _id: name,
          contributionsError: error.message,
          errorSince: now(),
          lastGoodAt: previous?.lastGoodAt ?? null,
          consumers: previous?.consumers ?? 0,
        });
      }
      this.seen.set(name, { signature, error: error.message });
      return;
    }
    if (seen?.error) logger.info({ provider: name, file: path }, 'contributions valid again');
    this.seen.set(name, { signature, error: null });

    const index = new Map((await store.desiredIndex(name)).map((entry) => [entry.key, entry]));
    const declared = new Set<string>();
    const at = now();
    const wanted: Array<{ key: string; id: string; desired: DesiredSpec }> = [
      ...state.consumers.map((c) => ({
        key: c.key,
        id: c.id,
        desired: { login: c.login, values: c.values, secretPath: c.secretPath, specHash: c.specHash, source: c.source, removed: false, problems: [] },
      })),
      ...state.rejected.map((r) => ({
        key: r.key,
        id: r.id,
        desired: {
          login: r.login,
          values: null,
          secretPath: '',
          specHash: `rejected-${sha256Hex(r.problems.join('\n')).slice(0, 16)}`,
          source: r.source,
          removed: false,
          problems: r.problems,
        },
      })),
    ];
    for (const { key, id, desired } of wanted) {
      declared.add(key);
      const existing = index.get(key);
      if (!existing) {
        const [snapshot] = initialTransition(provider.machine, { key });
        await store.create(
          { _id: key, provider: name, consumerId: id, desired, snapshot: provider.machine.getPersistedSnapshot(snapshot), state: 'pending' },
          at,
        );
      } else if (existing.specHash === desired.specHash && !existing.removed) {
        continue;
      } else {
        await store.setDesired(key, desired, at);
      }
      await queue.sync(key, desired.specHash.slice(0, 16));
    }
    for (const entry of index.values()) {
      if (declared.has(entry.key) || entry.removed) continue;
      await store.markRemoved(entry.key, at);
      await queue.sync(entry.key, 'removed');
      logger.info({ consumer: entry.key }, 'no longer declared; removing');
    }
    await store.setProviderStatus({ _id: name, contributionsError: null, errorSince: null, lastGoodAt: at, consumers: wanted.length });
  }

  /** Re-creates jobs the queue lost: overdue timers, effects whose worker died, undelivered specs. */
  async resync(): Promise<number> {
    const { store, queue, now } = this.options;
    const at = now();
    let recreated = 0;
    for (const record of await store.overdue(new Date(at.getTime() - OVERDUE_SLACK_MS), RESYNC_BATCH)) {
      if (record.effectUntil && record.effectUntil > at) continue;
      if (EFFECT_STATES.has(record.state)) await queue.sync(record._id, `resume-${record.rev}`);
      else if (record.timer) await queue.timer(record._id, record.timer, at);
      else continue;
      recreated++;
    }
    for (const record of await store.dirty(RESYNC_BATCH)) {
      await queue.sync(record._id, record.desired.removed ? 'removed' : record.desired.specHash.slice(0, 16));
      recreated++;
    }
    return recreated;
  }
}
