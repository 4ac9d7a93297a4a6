/**
 * Desired-state sync: reads each provider's contributions file when it changes (and on a
 * slow poll) and delivers to the workers, as jobs, what changed since it last delivered: a
 * consumer declared, changed, refused by policy, or no longer declared. It writes no consumer
 * record (the worker that delivers a spec to the machine records it), only each provider's
 * status. A file that does not validate changes nothing.
 *
 * A change that would remove more than the provider's `removalGuard` allows at once (a share
 * of its consumers, and more than a floor of them) is held back whole: nothing of it is
 * delivered, the provider's status says so, and it is delivered once a person confirms exactly
 * that change (`holdfast confirm-removals <provider> --change <digest>`, through the queue's Redis, sealed: a
 * confirmation holdfast did not write confirms nothing, and is said). A file edited since is judged afresh; a
 * confirmation names the change and when it was held back, so it never applies to a later one.
 *
 * What it last delivered is kept in memory (one short entry per consumer); at start-up it is
 * learned from the records ({@link DesiredSync.remember}), so removals made while holdfast
 * was down are delivered when it comes back.
 */
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { ProviderConfig } from '../config/config.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import type { Logger } from '../logging/logger.js';
import type { ConsumerQueue } from '../schedule/consumer-queue.js';
import type { RemovalConfirmations } from '../queue/coordination.js';
import type { ConsumerRecord } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';
import type { ContributionsRead } from './consumer-spec.js';
import { changeDigest, changesOf, deliveredDigestBytes, removalsHeldBack, shortChange } from './desired-change.js';
import { DeliveredShelf } from './delivered-shelf.js';
import { readContributions } from './load-contributions.js';
import { ownString } from './own-string.js';
import { specDigestBytes } from './spec-digest.js';

export interface DesiredSyncOptions {
  store: Pick<ConsumerStore, 'setProviderStatus' | 'providerStatus'>;
  queue: Pick<ConsumerQueue, 'deliverDesired'>;
  /** Where a person's confirmation of held-back removals is found. */
  confirmations: RemovalConfirmations;
  providers: readonly ProviderConfig[];
  logger: Logger;
  now: () => Date;
  pollEveryMs: number;
}

interface FileSeen {
  signature: string;
  error: string | null;
  /** The change held back by the mass-removal guard, if any, and since when (ms, as the provider's status says). */
  held?: string;
  heldSince?: number;
}

/** Consumers whose specs are delivered (decoded from where the read kept them) at once, at most. */
const DELIVERY_CHUNK = 1000;

export class DesiredSync {
  /**
   * Per provider: per consumer the digest of the spec last delivered (none: not delivered, or no longer declared) and
   * the login it claims on the backend.
   */
  private readonly delivered = new Map<string, DeliveredShelf>();
  /** Providers whose file has been read (or whose records learned) at least once. */
  private readonly known = new Set<string>();
  private readonly seen = new Map<string, FileSeen>();
  private readonly watchers: FSWatcher[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Map<string, Promise<void>>();
  /**
   * Per provider: the undeclared records the sweep found and held back (more than the removal guard allows), as said.
   */
  private readonly sweepHeld = new Map<string, string>();
  /** Per provider: the held change for which a confirmation holdfast did not write was said. */
  private readonly unsealedSaid = new Map<string, string>();
  private lastAt = 0;
  private stopped = false;

  constructor(private readonly options: DesiredSyncOptions) {
    for (const provider of options.providers) {
      this.delivered.set(provider.name, new DeliveredShelf());
    }
  }

  /** The logins the consumers of `provider` claim on its backend; undefined before its file was first read. */
  claimedLogins(provider: string): ReadonlySet<string> | undefined {
    if (!this.known.has(provider)) return undefined;
    return this.delivered.get(provider)?.loginSet() ?? new Set();
  }

  /** Login → the consumer key that claims it, for `provider`'s consumers; undefined before its file was first read. */
  loginOwners(provider: string): ReadonlyMap<string, string> | undefined {
    if (!this.known.has(provider)) return undefined;
    return this.delivered.get(provider)?.owners() ?? new Map();
  }

  /** Each provider's declared consumers, as its contributions were last read (a provider not read yet: absent). */
  declaredCounts(): Map<string, number> {
    return new Map([...this.known].map((name) => [name, this.delivered.get(name)?.size ?? 0]));
  }

  /** Learns what a record holds (at start-up, before {@link start}). */
  remember(record: Pick<ConsumerRecord, '_id' | 'provider' | 'desired' | 'refused'>): void {
    // a record being removed (no digest) still claims its login until it is gone
    this.delivered.get(record.provider)?.set(record._id, deliveredDigestBytes(record), record.desired.login);
  }

  /** Reads every contributions file once and delivers what changed, then keeps watching. */
  async start(): Promise<void> {
    for (const provider of this.options.providers) await this.syncProvider(provider, true);
    for (const provider of this.options.providers) {
      const path = provider.contributionsPath;
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
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const watcher of this.watchers) watcher.close();
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled(this.running.values());
  }

  /** One sync per provider at a time; a request during a sync runs after it. */
  private schedule(provider: ProviderConfig): Promise<void> {
    return this.serially(provider.name, () => this.syncProvider(provider, false), 'sync');
  }

  /** Runs `task` after whatever the provider's sync is doing (one task per provider at a time); its error is logged. */
  private serially(name: string, task: () => Promise<void>, what: string): Promise<void> {
    const previous = this.running.get(name) ?? Promise.resolve();
    const next = previous
      .then(() => (this.stopped ? undefined : task()))
      .catch((error: unknown) =>
        this.options.logger.error(
          { provider: name, err: String(error) },
          `${what} of ${name} failed: ${String(error)}`,
        ),
      );
    this.running.set(name, next);
    return next;
  }

  /**
   * Whether a record the sweep read is of a consumer its provider's last good desired
   * state does not declare (and that is not being removed already): only once the provider's
   * file was read and valid, so bad input never deletes, and a change held back still declares
   * what it would remove. Such a record is a removal lost (a spec older than the removal made
   * the record again, see `ConsumerRun.made`, past its mark's lifetime or after the queue's
   * Redis forgot it): {@link removeUndeclared} delivers the removal again, as the start-up would.
   */
  isUndeclared(record: Pick<ConsumerRecord, '_id' | 'provider' | 'desired'>): boolean {
    const delivered = this.delivered.get(record.provider);
    return (
      delivered !== undefined &&
      this.known.has(record.provider) &&
      !record.desired.removed &&
      !delivered.has(record._id)
    );
  }

  /**
   * Delivers again the removal of each record the sweep found undeclared ({@link isUndeclared}),
   * judged again after whatever its provider's sync is doing (a consumer declared meanwhile
   * stays), and under the provider's removal guard: more than it allows at once are not removed,
   * said once (a restart delivers them through the guard, for a person to confirm).
   */
  removeUndeclared(records: ReadonlyArray<Pick<ConsumerRecord, '_id' | 'provider' | 'desired'>>): Promise<void> {
    const runs = this.options.providers.flatMap((provider) => {
      const found = records.filter((record) => record.provider === provider.name);
      return found.length === 0
        ? []
        : [this.serially(provider.name, () => this.removeAgain(provider, found), 'the removal of undeclared records')];
    });
    return Promise.all(runs).then(() => undefined);
  }

  private async removeAgain(
    provider: ProviderConfig,
    found: ReadonlyArray<Pick<ConsumerRecord, '_id' | 'provider' | 'desired'>>,
  ): Promise<void> {
    const { logger } = this.options;
    const name = provider.name;
    const keys = found.filter((record) => this.isUndeclared(record)).map((record) => record._id);
    if (keys.length === 0) return;
    const declared = this.delivered.get(name)?.size ?? 0;
    if (removalsHeldBack(provider, keys.length, declared)) {
      const said = [...keys].sort().join('\n');
      if (this.sweepHeld.get(name) === said) return;
      this.sweepHeld.set(name, said);
      logger.error(
        { provider: name, removals: keys.length, of: declared, sample: [...keys].sort().slice(0, 5) },
        `removals held back: the sweep found ${keys.length} records of ${name} whose consumers ${provider.contributionsPath} no longer declares, more than its removal guard allows at once; ` +
          'none is removed now: restart holdfast to judge them as a change, for a person to confirm with `holdfast confirm-removals`',
      );
      return;
    }
    this.sweepHeld.delete(name);
    await this.options.queue.deliverDesired(
      keys.map((key) => ({ key, desired: null })),
      this.deliveryTime(),
    );
    for (const key of keys)
      logger.warn(
        { consumer: key },
        'no longer declared, but its record was made again (a removal overtaken by an older spec); removing it again',
      );
  }

  private async signature(path: string): Promise<string> {
    try {
      const s = await stat(path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (error) {
      return `missing:${(error as NodeJS.ErrnoException).code ?? ''}`;
    }
  }

  /** A time for this pass's deliveries: later than any before it, so a worker can tell the newest. */
  private deliveryTime(): number {
    this.lastAt = Math.max(this.options.now().getTime(), this.lastAt + 1);
    return this.lastAt;
  }

  /** Reads the provider's contributions (when changed, or when `force`) and delivers what changed. */
  async syncProvider(provider: ProviderConfig, force: boolean): Promise<void> {
    const { store, logger, now } = this.options;
    const name = provider.name;
    const path = provider.contributionsPath;
    const signature = await this.signature(path);
    const seen = this.seen.get(name);
    if (!force && seen?.signature === signature) {
      // an unchanged file is read again only when a person confirmed what it holds back
      if (seen.held === undefined || !(await this.confirmed(name, seen.held, seen.heldSince))) return;
    }

    const delivered = this.delivered.get(name) ?? new DeliveredShelf();
    let read;
    try {
      // each item parsed once: the specs that changed against what was delivered are kept for the delivery
      read = await readContributions(provider, delivered);
    } catch (error) {
      if (!isHoldfastError(error, 'CONTRIBUTIONS_INVALID', 'CONTRIBUTIONS_BEYOND_BOUNDS')) throw error;
      await this.refuse(provider, signature, error.message);
      return;
    }
    if (seen?.error) logger.info({ provider: name, file: path }, 'contributions valid again');
    const wasHeld = seen?.held;

    const { changed, gone } = changesOf(read.consumers, delivered);
    let confirmed: string | undefined;
    if (removalsHeldBack(provider, gone.length, delivered.size)) {
      const change = changeDigest(read.consumers, changed, gone);
      if (!(await this.confirmed(name, change, seen?.held === change ? seen.heldSince : undefined))) {
        await this.holdBack(provider, signature, change, gone, delivered.size);
        return;
      }
      confirmed = change;
      logger.warn(
        { provider: name, file: path, removals: gone.length },
        `removals confirmed by a person: removing ${gone.length} of ${delivered.size} consumers of ${name} as ${path} declares`,
      );
    }

    await this.deliver(name, read, changed, gone);
    this.known.add(name);
    if (wasHeld !== undefined && confirmed === undefined)
      logger.info(
        { provider: name, file: path },
        `${path} changed since removals were held back; judged afresh, nothing is held back now`,
      );
    for (const key of gone) logger.info({ consumer: key }, 'no longer declared; removing');
    this.seen.set(name, { signature, error: null });
    await store.setProviderStatus({
      _id: name,
      contributionsError: null,
      errorSince: null,
      lastGoodAt: now(),
      consumers: read.consumers.length,
      heldRemovals: null,
    });
    if (confirmed) await this.options.confirmations.clearConfirmedRemovals(name, confirmed);
  }

  /** A file that does not validate: said once (and kept in the provider's status); nothing changes. */
  private async refuse(provider: ProviderConfig, signature: string, message: string): Promise<void> {
    const { store, logger, now } = this.options;
    const name = provider.name;
    if (this.seen.get(name)?.error !== message) {
      logger.error(
        { provider: name, file: provider.contributionsPath },
        `contributions refused; the last good desired state stays in force:\n${message}`,
      );
      const previous = await store.providerStatus(name);
      await store.setProviderStatus({
        _id: name,
        contributionsError: message,
        errorSince: now(),
        lastGoodAt: previous?.lastGoodAt ?? null,
        consumers: previous?.consumers ?? 0,
        heldRemovals: null,
      });
    }
    this.seen.set(name, { signature, error: message });
  }

  /**
   * Delivers the specs of the `changed` consumers (decoded a chunk at a time from the JSON the read
   * kept, so that no more than a chunk of full specs is held as objects at once), then the removals of `gone`;
   * what each chunk delivered is remembered once the queue has it.
   */
  private async deliver(
    name: string,
    read: ContributionsRead,
    changed: readonly number[],
    gone: readonly string[],
  ): Promise<void> {
    const delivered = this.delivered.get(name) ?? new DeliveredShelf();
    const at = this.deliveryTime();
    for (let i = 0; i < changed.length; i += DELIVERY_CHUNK) {
      const specs = await read.specs(changed.slice(i, i + DELIVERY_CHUNK));
      await this.options.queue.deliverDesired(specs, at);
      for (const { key: read, desired } of specs) {
        // kept for the life of the process: not as cut from the file's text
        const key = ownString(read);
        // a refused spec keeps the accepted one's login
        const claims = desired.problems.length === 0 || delivered.login(key) === undefined;
        delivered.set(key, specDigestBytes(desired), claims ? ownString(desired.login) : undefined);
      }
    }
    for (let i = 0; i < gone.length; i += DELIVERY_CHUNK) {
      const keys = gone.slice(i, i + DELIVERY_CHUNK);
      await this.options.queue.deliverDesired(
        keys.map((key) => ({ key, desired: null })),
        at,
      );
      // a removed consumer's login is released by the orphan watch's second look
      for (const key of keys) delivered.delete(key);
    }
  }

  /**
   * Whether a person confirmed exactly `change`, as held back since `since` (ms; undefined: as the provider's status
   * says). A confirmation holdfast did not write (its seal fails: a plain `SET` into the queue's Redis) confirms nothing,
   * said once per held change.
   */
  private async confirmed(name: string, change: string, since: number | undefined): Promise<boolean> {
    const given = await this.options.confirmations.confirmedRemovals(name);
    if (given === 'unsealed' && this.unsealedSaid.get(name) !== change) {
      this.unsealedSaid.set(name, change);
      this.options.logger.error(
        { provider: name, change: shortChange(change) },
        `a confirmation of ${name}'s held-back removals that holdfast did not write is in the queue's Redis (its seal fails: ` +
          `written there by hand or by another who can write that Redis): it confirms nothing, the change stays held back`,
      );
    }
    if (given === null || given === 'unsealed' || given.change !== change) return false;
    const heldSince = since ?? (await this.options.store.providerStatus(name))?.heldRemovals?.since.getTime();
    return given.since === heldSince;
  }

  /** Holds back a change that would remove too many consumers: said once, kept in the provider's status. */
  private async holdBack(
    provider: ProviderConfig,
    signature: string,
    change: string,
    gone: readonly string[],
    of: number,
  ): Promise<void> {
    const { store, logger, now } = this.options;
    const name = provider.name;
    const path = provider.contributionsPath;
    const seen = this.seen.get(name);
    if (seen?.held === change) {
      this.seen.set(name, { ...seen, signature, error: null });
      return;
    }
    logger.error(
      { provider: name, file: path, removals: gone.length, of, change: shortChange(change) },
      `removals held back: ${gone.length} of ${of} consumers of ${name} would be removed by ${path} (more than ${Math.round(provider.removalGuard.share * 100)}% at once); ` +
        `nothing in this change is applied until a person confirms it with \`holdfast confirm-removals ${name} --change ${shortChange(change)}\``,
    );
    const previous = await store.providerStatus(name);
    // the same change held back again (after a restart) keeps its time: a confirmation of it still holds
    const since = previous?.heldRemovals?.change === change ? previous.heldRemovals.since : now();
    this.seen.set(name, { signature, error: null, held: change, heldSince: since.getTime() });
    await store.setProviderStatus({
      _id: name,
      contributionsError: null,
      errorSince: null,
      lastGoodAt: previous?.lastGoodAt ?? null,
      consumers: of,
      heldRemovals: {
        file: path,
        change,
        removals: gone.length,
        of,
        since,
        sample: [...gone].sort().slice(0, 5),
      },
    });
  }
}
