/**
 * The consumer's side: where a provider's backend records failed logins (its adapter's
 * `failedLogins`, Redis's `ACL LOG`), they are read every `verifyEvery`, one read per node
 * whatever the number of consumers, by the process that runs the desired-state sync (it knows
 * which consumer claims which login). Each failure is attributed to the consumer whose login it
 * names, or counted to the provider only; a consumer whose app fails to log in while its login
 * is held is *turned away*: said once when it becomes so (repeats counted), noted for the status
 * and the rotations (`FailedLoginsNote`, kept a few intervals), counted in the metrics. Nothing is
 * written to a backend, and nothing is read while the record store does not answer.
 */
import type { Adapter } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import { formatDuration } from '../config/duration.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import type {
  FailedLoginEvent,
  FailedLoginNotes,
  NoteReads,
  TimelineNotes,
  TurnedAwayConsumer,
} from '../queue/coordination.js';
import type { FailedLoginsRead } from '../adapters/login-failures.js';
import type { Rotation } from '../queue/rotation-notes.js';
import { clockOf } from '../old-connections/old-connections-words.js';
import { FAILED_LOGIN_WINDOW_MS, FailedLoginTally } from './failed-logins-tally.js';

export interface FailedLoginsWatchOptions {
  providers: ReadonlyArray<{ config: ProviderConfig; adapter: Adapter }>;
  /** Login → the consumer key that claims it, per provider; undefined until its contributions were read. */
  owners: (provider: string) => ReadonlyMap<string, string> | undefined;
  /**
   * Where the note goes, the consumer's timeline (its history: `by: backend`), and the consumers' briefs (a failure
   * counts only while its consumer is held).
   */
  notes: FailedLoginNotes & Pick<TimelineNotes, 'noteTimeline'> & Pick<NoteReads, 'briefsOf' | 'timeline'>;
  logger: Logger;
  scrubber: Scrubber;
  /** Counts each read's failed logins (`holdfast_failed_logins_total`). */
  counted?: (provider: string, attributed: number, unattributed: number) => void;
  /** True while nothing may be asked of a backend (the record store does not answer). */
  paused: () => boolean;
  now: () => Date;
  /** The provider's rotations as noted (`src/queue/rotation-notes.ts`): a failure after a cutover names a stale client. */
  rotations?: (provider: string) => Promise<ReadonlyMap<string, Rotation>>;
}

/** `cache/photos: a failed login from 10.0.0.7 since its old password was dropped at 06:05:02 UTC (…)`. */
export function staleClientLine(key: string, events: readonly FailedLoginEvent[], cutAt: number): string {
  const from = [...new Set(events.map((e) => e.address))];
  const count = events.reduce((n, e) => n + e.count, 0);
  const shown = `${from.slice(0, 5).join(', ')}${from.length > 5 ? `, … ${from.length - 5} more` : ''}`;
  return `${key}: ${count} failed login${count === 1 ? '' : 's'} from ${shown} since its old password was dropped at ${clockOf(cutAt)} (rotation cut over): likely a client still using the old password`;
}

/** `cache/photos: 37 failed logins from 10.0.0.7, 10.0.0.8 in the last 5m (wrong password)`. */
export function turnedAwayLine(key: string, events: readonly FailedLoginEvent[], windowMs: number): string {
  const count = events.reduce((n, e) => n + e.count, 0);
  const from = [...new Set(events.map((e) => e.address))];
  const shown = `${from.slice(0, 5).join(', ')}${from.length > 5 ? `, … ${from.length - 5} more` : ''}`;
  return `${key}: ${count} failed login${count === 1 ? '' : 's'} from ${shown} in the last ${formatDuration(windowMs)} (wrong password)`;
}

export class FailedLoginsWatch {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly tallies = new Map<string, FailedLoginTally>();
  private readonly running = new Set<Promise<void>>();
  /** Per provider: the nodes whose lost entries were said, within the window. */
  private readonly lostSaid = new Map<string, Set<string>>();
  /**
   * Per provider: the failures read last pass, attributed this pass, once what holdfast itself found of them (a loss and
   * its heal) is noted: its own checks' failures then are told from an app's.
   */
  private readonly pending = new Map<string, FailedLoginsRead['failures']>();
  /** `<consumer key> <cutAt>`: the stale clients said, once per cutover. */
  private readonly staleSaid = new Set<string>();

  constructor(private readonly options: FailedLoginsWatchOptions) {}

  start(): void {
    for (const provider of this.options.providers) {
      if (!provider.adapter.failedLogins) continue;
      this.tallies.set(provider.config.name, new FailedLoginTally());
      const run = (): void => {
        const pass = this.pass(provider).finally(() => this.running.delete(pass));
        this.running.add(pass);
      };
      const timer = setInterval(run, provider.config.timing.verifyEveryMs);
      timer.unref();
      this.timers.push(timer);
      run(); // the first read learns where each node's log stands
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled(this.running);
  }

  /** Reads one provider's failed logins, attributes them, says and notes what changed. */
  async pass({ config, adapter }: { config: ProviderConfig; adapter: Adapter }): Promise<void> {
    const { logger, scrubber, notes } = this.options;
    const tally = this.tallies.get(config.name);
    const owners = this.options.owners(config.name);
    if (!tally || !adapter.failedLogins || !owners || this.options.paused()) return;
    const timeout = config.timing.checkTimeoutMs;
    let read;
    try {
      read = await adapter.failedLogins({ signal: AbortSignal.timeout(timeout), deadline: Date.now() + timeout });
    } catch (error) {
      logger.debug(
        { provider: config.name },
        `could not read the failed logins of ${config.name}: ${scrubber.describe(error)}`,
      );
      return;
    }
    const now = this.options.now().getTime();
    const before = tally.turnedAway();
    const ready = { ...read, failures: this.pending.get(config.name) ?? [] };
    this.pending.set(config.name, read.failures);
    const step = tally.add(await this.whileHeld(config.name, ready, owners, now), owners, now);
    this.options.counted?.(config.name, step.attributed, step.unattributed);
    const note = tally.note(now);
    const becoming = note.consumers.filter((c) => !before.has(c.key) && step.byConsumer.has(c.key));
    for (const consumer of becoming) {
      logger.warn(
        { provider: config.name, consumer: consumer.key, failedLogins: consumer.count },
        `${turnedAwayLine(consumer.key, consumer.events, note.windowMs)}: its login is held, so its app logs in with another password (turned away; repeats are counted)`,
      );
    }
    await this.noteHistory(becoming, note.windowMs, now);
    await this.sayStale(config.name, step.byConsumer);
    const after = tally.turnedAway();
    for (const key of before) {
      if (!after.has(key))
        logger.info(
          { provider: config.name, consumer: key },
          `${key}: no failed login in the last ${formatDuration(note.windowMs)} (no longer turned away)`,
        );
    }
    this.sayLost(config.name, note.lost);
    const ttl = 3 * config.timing.verifyEveryMs + timeout;
    await notes.setFailedLogins(config.name, note, ttl).catch((error: unknown) => {
      logger.debug(
        { provider: config.name },
        `the failed logins of ${config.name} could not be noted: ${scrubber.describe(error)}`,
      );
    });
  }

  /**
   * The failures to count: those of logins no consumer claims, and those of a consumer while it is held (since it was
   * last held). A consumer not held is holdfast's own finding already (its login gone, a password changed by hand):
   * the failures then are its own checks' and the heal's, from any holdfast process, not an app turned away.
   */
  private async whileHeld(
    provider: string,
    read: FailedLoginsRead,
    owners: ReadonlyMap<string, string>,
    now: number,
  ): Promise<FailedLoginsRead> {
    const keys = [...new Set(read.failures.flatMap((f) => owners.get(f.login) ?? []))];
    if (keys.length === 0) return read;
    const [briefs, healed] = await Promise.all([
      this.options.notes.briefsOf(keys).catch(() => new Map<string, never>()),
      this.lastHealed(provider, now),
    ]);
    const failures = read.failures.filter((f) => {
      const key = owners.get(f.login);
      if (key === undefined) return true;
      const brief = briefs.get(key);
      // a quiet heal leaves the brief's `since`: the failures up to its heal (a second's slack: the log's ages are whole
      // seconds) are the loss's, holdfast's own checks among them
      const heal = healed.get(key);
      return brief?.state === 'held' && f.at >= brief.since && (heal === undefined || f.at > heal + 1_000);
    });
    return { ...read, failures };
  }

  /** When each consumer of `provider` was last healed, within the failed logins' window (its timeline). */
  private async lastHealed(provider: string, now: number): Promise<Map<string, number>> {
    const events = await this.options.notes.timeline(provider, now - FAILED_LOGIN_WINDOW_MS).catch(() => []);
    const healed = new Map<string, number>();
    for (const e of events) if (e.kind === 'healed') healed.set(e.key, Math.max(e.at, healed.get(e.key) ?? 0));
    return healed;
  }

  /**
   * Failed logins of a consumer after its rotation was cut over (its old password dropped): said at once, naming the
   * addresses, as the likely stale client; once per cutover.
   */
  private async sayStale(provider: string, fresh: ReadonlyMap<string, FailedLoginEvent[]>): Promise<void> {
    if (fresh.size === 0 || !this.options.rotations) return;
    const rotations = await this.options.rotations(provider).catch(() => undefined);
    for (const [key, events] of fresh) {
      const cutAt = rotations?.get(key)?.cutAt;
      const after = cutAt === undefined ? [] : events.filter((e) => e.at >= cutAt);
      if (cutAt === undefined || after.length === 0 || this.staleSaid.has(`${key} ${cutAt}`)) continue;
      this.staleSaid.add(`${key} ${cutAt}`);
      this.options.logger.warn({ provider, consumer: key, staleClient: true }, staleClientLine(key, after, cutAt));
    }
  }

  /** Each consumer becoming turned away, in its history (`by: backend`; its state stays held). */
  private async noteHistory(consumers: readonly TurnedAwayConsumer[], windowMs: number, now: number): Promise<void> {
    if (consumers.length === 0) return;
    const events = consumers.map((c) => ({
      at: now,
      kind: 'turnedAway' as const,
      key: c.key,
      state: 'held' as const,
      from: 'held' as const,
      reason: `turned away: ${turnedAwayLine(c.key, c.events, windowMs).slice(c.key.length + 2)}`,
      by: 'backend' as const,
    }));
    await this.options.notes.noteTimeline(events).catch(() => undefined);
  }

  /** A node whose log dropped entries before they were read: said once while it stays within the window. */
  private sayLost(provider: string, lost: readonly string[]): void {
    const said = this.lostSaid.get(provider) ?? new Set<string>();
    for (const node of lost) {
      if (said.has(node)) continue;
      this.options.logger.warn(
        { provider, node },
        `${provider}: node ${node}'s ACL LOG was full and held no entry already read: failed logins there may have been dropped before holdfast read them; raise its acllog-max-len or lower verifyEvery`,
      );
    }
    this.lostSaid.set(provider, new Set(lost));
  }
}
