/**
 * After a rotation, the connections of its login established before it: the clients that logged in
 * with the old password. For each provider whose adapter can list connections
 * (`Adapter.openConnections`) and that has rotations noted (`src/queue/rotation-notes.ts`), one
 * listing every `verifyEvery` serves all of them (Redis: one `CLIENT LIST TYPE normal` per node).
 * What it finds is noted for the status and for the cutover (`workers/overlap-evidence.ts`), and
 * said once per rotation: where the overlap is kept past `rotationOverlap` for them, and where there
 * is no overlap (PostgreSQL), that they logged in with the old password. A rotation is looked after
 * until nothing is left to look for: no connection from before it (and its overlap cut over, where
 * it has one), or `rotationOverlapMax` after it (after its cutover, where it has an overlap; twice
 * that after the rotation while it is not cut over: the cutover reads it). Nothing is listed while the record store does not answer, and nothing is written to a backend.
 */
import type { Adapter, LoginSession } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import { formatDuration } from '../config/duration.js';
import { overlapMaxMs } from '../config/rotation-overlap.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import { ADDRESSES_KEPT, type OldConnections, type Rotation, type RotationNotes } from '../queue/rotation-notes.js';
import { clockOf, oldConnectionsWords } from './old-connections-words.js';

export interface OldConnectionsWatchOptions {
  providers: ReadonlyArray<{ config: ProviderConfig; adapter: Adapter }>;
  notes: Pick<RotationNotes, 'rotations' | 'forget' | 'setOldConnections'>;
  logger: Logger;
  scrubber: Scrubber;
  /** True while nothing may be asked of a backend (the record store does not answer). */
  paused: () => boolean;
  now: () => Date;
}

type Watched = { config: ProviderConfig; adapter: Adapter };

export class OldConnectionsWatch {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  /** Per consumer key: the rotation (its time) whose old connections were last said. */
  private readonly said = new Map<string, number>();

  constructor(private readonly options: OldConnectionsWatchOptions) {}

  start(): void {
    for (const provider of this.options.providers) {
      if (!provider.adapter.openConnections) continue;
      const timer = setInterval(() => {
        const pass = this.pass(provider).finally(() => this.running.delete(pass));
        this.running.add(pass);
      }, provider.config.timing.verifyEveryMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled(this.running);
  }

  /** One listing of a provider's connections, for every rotation it has noted. */
  async pass({ config, adapter }: Watched): Promise<void> {
    const { notes, logger, scrubber } = this.options;
    if (!adapter.openConnections || this.options.paused()) return;
    const name = config.name;
    const now = this.options.now().getTime();
    let rotations: Map<string, Rotation>;
    try {
      rotations = await notes.rotations(name);
    } catch {
      return; // the queue's Redis: its own outage is said elsewhere
    }
    if (rotations.size === 0) return;
    const ms = config.timing.checkTimeoutMs;
    let open: LoginSession[];
    try {
      const logins = new Set([...rotations.values()].map((r) => r.login));
      open = await adapter.openConnections(logins, { signal: AbortSignal.timeout(ms), deadline: now + ms });
    } catch (error) {
      logger.debug({ provider: name }, `could not list the connections on ${name}: ${scrubber.describe(error)}`);
      return;
    }
    const found = new Map<string, OldConnections>();
    const done: string[] = [];
    for (const [key, rotation] of rotations) {
      const old = oldConnectionsOf(rotation, open, now);
      if (finished(config, rotation, old.count, now)) done.push(key);
      else found.set(key, old);
      this.say(config, key, old, now);
    }
    const ttl = 2 * config.timing.verifyEveryMs + ms + 1000;
    await Promise.all([notes.setOldConnections(name, found, ttl), notes.forget(name, done)]).catch(() => undefined);
    for (const key of this.said.keys()) if (!found.has(key) && key.startsWith(`${name}/`)) this.said.delete(key);
  }

  /** Says once per rotation what its old connections mean: the overlap kept for them, or the old password in use. */
  private say(config: ProviderConfig, key: string, old: OldConnections, now: number): void {
    if (old.count === 0 || old.cutAt !== undefined || this.said.get(key) === old.at) return;
    const overlap = config.rotationOverlapMs;
    if (overlap === undefined) {
      this.said.set(key, old.at);
      this.options.logger.warn(
        { provider: config.name, consumer: key, connections: old.count },
        `${key}: ${oldConnectionsWords(old)}: they logged in with the old password, which no longer works for a new login`,
      );
      return;
    }
    if (now < old.at + overlap) return; // the overlap runs as configured: nothing is decided yet
    this.said.set(key, old.at);
    const max = overlapMaxMs(config);
    this.options.logger.warn(
      { provider: config.name, consumer: key, connections: old.count },
      `${key}: rotation overlap kept past rotationOverlap (${formatDuration(overlap)}): ${oldConnectionsWords(old)}; the old password is dropped once none remains and no failed login is seen, at the latest at ${clockOf(old.at + max)} (rotationOverlapMax ${formatDuration(max)})`,
    );
  }
}

/** The connections of `rotation`'s login established before it, among `open`. */
export function oldConnectionsOf(rotation: Rotation, open: readonly LoginSession[], now: number): OldConnections {
  const before = open.filter((s) => s.login === rotation.login && s.startedAt < rotation.at);
  const addresses = [...new Set(before.map((s) => s.address))].sort().slice(0, ADDRESSES_KEPT);
  return { ...rotation, listedAt: now, count: before.length, addresses };
}

/** Whether nothing is left to look for of a rotation. */
function finished(config: ProviderConfig, rotation: Rotation, count: number, now: number): boolean {
  const max = overlapMaxMs(config);
  // no overlap: followed from the rotation; an overlap cut over: kept the bound after the cutover, so that a failed
  // login of a client still holding the old password is named as the stale one (`failed-logins-watch.ts`)
  if (config.rotationOverlapMs === undefined) return count === 0 || now >= rotation.at + max;
  if (rotation.cutAt !== undefined) return now >= rotation.cutAt + max;
  // an overlap not cut yet: kept for the cutover to read, until twice the bound (a consumer no longer checked)
  return now >= rotation.at + 2 * max;
}
