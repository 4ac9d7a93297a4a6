/**
 * Provider signals, what workers tell each other about the backends and the queue: each
 * provider's **pause** (its checks timed out) and the one probe a pause lets through, the
 * consumers each provider **could not be asked** about (to ask them again promptly when it
 * answers) and the consumers each provider's node event made **suspect** (to ask them now), the record store's **outage** as a worker's watch last saw it (it expires by
 * itself), and the **sentinel** whose absence says the queue's Redis forgot everything.
 */
import { CoordinationPart } from './context.js';
import { perProvider } from './reads.js';
import { decodeJson, pauseCodec, suspectEventCodec, type Pause, type SuspectEvent } from './values.js';

/** A provider's pause, as the checks on it take and lift it. */
export interface PauseSignals {
  /** The provider's pause, or null when its checks run. */
  pauseOf(provider: string): Promise<Pause | null>;
  /** Pauses the provider's checks unless they already are; true when this call paused them. */
  pauseProvider(provider: string, pause: Pause): Promise<boolean>;
  /** Lifts the provider's pause; true when there was one. */
  unpauseProvider(provider: string): Promise<boolean>;
  /** The one probe a paused provider lets through every `ms` (across every worker); true when this caller got it. */
  takeProbe(provider: string, ms: number): Promise<boolean>;
}

/** The consumers a provider could not be asked about, as its recovery asks them again. */
export interface CouldNotAskSignals {
  /** One of the consumers of `provider` last found could-not-ask, or null when there is none. */
  oneCouldNotAsk(provider: string): Promise<string | null>;
  /** The consumers of `provider` last found could-not-ask, removed from the set as they are returned. */
  takeCouldNotAsk(provider: string): Promise<string[]>;
}

/** The consumers a node event made suspect (rule 13), as the workers ask them and the status reads them. */
export interface SuspectSignals {
  /**
   * Makes every consumer of `provider` asked about suspect, each by bringing its routine wait forward to now (the
   * ordinary rounds then check it on its ticket), and notes `event` (`of`: the consumers it concerns); replies the
   * consumers made suspect now (one already suspect, whose asking is under way, is not asked twice). First notes when
   * the event was seen (`askedBefore`, a loss wave's start, else `event.at`): a check that began asking before it
   * leaves its consumer suspect at its release.
   */
  markSuspects(provider: string, event: Omit<SuspectEvent, 'of' | 'asked'>, askedBefore?: number): Promise<string[]>;
  /** How many consumers of each provider are suspect, with the last event that made them so. */
  suspects(providers: readonly string[]): Promise<Map<string, Suspects>>;
  /**
   * Brings forward once more the waits of `provider`'s consumers still suspect (stragglers: their checks could not ask,
   * or were missed); replies how many.
   */
  askSuspectsAgain(provider: string): Promise<number>;
  /**
   * Notes on `provider`'s last event that all its suspects were asked by `asked` (ISO), unless noted already (by this
   * worker or another): replies the event when this call noted it, else null. Once per event.
   */
  suspectsAsked(provider: string, asked: string): Promise<SuspectEvent | null>;
  /** The provider's last node events, newest first (at most {@link SUSPECT_EVENTS_KEPT}). */
  suspectEvents(provider: string): Promise<SuspectEvent[]>;
}

/** How many of a provider's node events its list keeps (for the consumers' histories). */
export const SUSPECT_EVENTS_KEPT = 50;
/** How many consumers one call of the suspect script brings forward (a batch; the batches are pipelined). */
export const SUSPECT_BATCH = 1_000;

function batchesOf(keys: readonly string[]): string[][] {
  const batches: string[][] = [];
  for (let i = 0; i < keys.length; i += SUSPECT_BATCH) batches.push(keys.slice(i, i + SUSPECT_BATCH));
  return batches;
}

/** Which consumers are suspect, a few of them: for a person to follow (the dashboard links them). */
export interface SuspectListing {
  /** Up to `max` of `provider`'s suspect consumers (any of them, unordered): one bounded read, never the whole set. */
  suspectSample(provider: string, max: number): Promise<string[]>;
}

/** A provider's suspect consumers: how many, and the node event that made them so (null when not known). */
export interface Suspects {
  count: number;
  event: SuspectEvent | null;
}

/** Whether the queue's Redis still remembers (see {@link markAlive}). */
export interface QueueSentinel {
  /** False when the queue's Redis has forgotten everything since {@link markAlive} (restarted empty, flushed). */
  alive(): Promise<boolean>;
  markAlive(now: Date): Promise<void>;
  /** Whether the queue's Redis forgot everything, asked at most once a second (for explaining errors). */
  forgot(): Promise<boolean>;
  /**
   * On a sharded queue: the prefixes of the shards that forgot, of how many (one master restarted empty forgets its
   * shards alone).
   */
  forgottenShards?(): Promise<{ lost: string[]; of: number }>;
}

/** The record store's outage, as a worker's watch publishes it and the status reads it. */
export interface StoreOutageSignal {
  /** The record store does not answer (kept `ttlMs`, refreshed while it stays so); null: it answers again. */
  setStoreOutage(outage: Pause | null, ttlMs?: number): Promise<void>;
  /** The record store's outage as a worker last saw it, or null. */
  storeOutage(): Promise<Pause | null>;
}

/** The signals, as the status reads them for every provider. */
export interface SignalReads {
  /** Every paused provider among `providers`. */
  pauses(providers: readonly string[]): Promise<Map<string, Pause>>;
  /** How many consumers of each provider were last found could-not-ask. */
  couldNotAskCounts(providers: readonly string[]): Promise<Map<string, number>>;
  /** How many consumers of each provider are suspect, and why. */
  suspects(providers: readonly string[]): Promise<Map<string, Suspects>>;
  alive(): Promise<boolean>;
}

/**
 * The signals part of coordination (`coordination.signals`): every slice above, as one shard or a sharded queue serves
 * it.
 */
export interface SignalsPart
  extends
    PauseSignals,
    CouldNotAskSignals,
    SuspectSignals,
    SuspectListing,
    QueueSentinel,
    StoreOutageSignal,
    SignalReads {}

const decodePause = (raw: string | null) => decodeJson(pauseCodec, raw);

/** How long a sentinel's answer is kept for {@link QueueSentinel.forgot}. */
const FORGOT_ASKED_EVERY_MS = 1000;

/** Provider signals on one connection, under one key table. */
export class Signals extends CoordinationPart implements SignalsPart {
  private aliveSeen: { at: number; alive: Promise<boolean> } | undefined;

  async pauseOf(provider: string): Promise<Pause | null> {
    return decodePause(await this.redis.get(this.keys.paused(provider)));
  }

  async pauseProvider(provider: string, pause: Pause): Promise<boolean> {
    return (await this.redis.set(this.keys.paused(provider), JSON.stringify(pause), 'NX')) === 'OK';
  }

  async unpauseProvider(provider: string): Promise<boolean> {
    return (await this.redis.del(this.keys.paused(provider))) > 0;
  }

  async takeProbe(provider: string, ms: number): Promise<boolean> {
    return (await this.redis.set(this.keys.probe(provider), '1', 'PX', ms, 'NX')) === 'OK';
  }

  pauses(providers: readonly string[]): Promise<Map<string, Pause>> {
    return perProvider(this.redis, providers, this.keys.paused, decodePause);
  }

  oneCouldNotAsk(provider: string): Promise<string | null> {
    return this.redis.srandmember(this.keys.couldNotAsk(provider));
  }

  takeCouldNotAsk(provider: string): Promise<string[]> {
    return this.scripts.run('takeCouldNotAsk', { provider });
  }

  async couldNotAskCounts(providers: readonly string[]): Promise<Map<string, number>> {
    const counts = await Promise.all(providers.map((p) => this.redis.scard(this.keys.couldNotAsk(p))));
    return new Map(providers.map((p, i) => [p, counts[i] ?? 0]));
  }

  async markSuspects(
    provider: string,
    event: Omit<SuspectEvent, 'of' | 'asked'>,
    askedBefore?: number,
  ): Promise<string[]> {
    // first, so that no check under way now is released as if it had asked the node since (`scripts.ts`, `release`)
    const cut = askedBefore ?? Date.parse(event.at);
    await this.scripts.run('noteSuspectCut', { provider, at: Number.isNaN(cut) ? Date.now() : cut });
    const checked = this.keys.checked(provider);
    const all =
      askedBefore === undefined
        ? await this.redis.zrange(checked, 0, -1)
        : await this.redis.zrangebyscore(checked, '-inf', `(${askedBefore}`);
    // the rounds take what is due by their own clock: brought forward to this one's now
    const now = Date.now();
    const fresh = await Promise.all(
      batchesOf(all).map((keys) => this.scripts.run('suspectWaits', { provider, now, keys })),
    );
    const { node, why, at } = event;
    const text = JSON.stringify({ node, why, at, of: all.length });
    const events = this.keys.suspectEvents(provider);
    await this.redis
      .multi()
      .set(this.keys.suspectEvent(provider), text)
      .lpush(events, text)
      .ltrim(events, 0, SUSPECT_EVENTS_KEPT - 1)
      .exec();
    return fresh.flat();
  }

  async askSuspectsAgain(provider: string): Promise<number> {
    const left = await this.redis.smembers(this.keys.suspects(provider));
    const now = Date.now();
    const asked = await Promise.all(
      batchesOf(left).map((keys) => this.scripts.run('suspectWaits', { provider, now, again: true, keys })),
    );
    return asked.reduce((n, keys) => n + keys.length, 0);
  }

  async suspectsAsked(provider: string, asked: string): Promise<SuspectEvent | null> {
    return decodeJson(suspectEventCodec, await this.scripts.run('noteSuspectsAsked', { provider, asked }));
  }

  async suspectEvents(provider: string): Promise<SuspectEvent[]> {
    const raw = await this.redis.lrange(this.keys.suspectEvents(provider), 0, SUSPECT_EVENTS_KEPT - 1);
    return raw.flatMap((text) => decodeJson(suspectEventCodec, text) ?? []);
  }

  async suspects(providers: readonly string[]): Promise<Map<string, Suspects>> {
    const read = this.redis.pipeline();
    for (const p of providers) read.scard(this.keys.suspects(p)).get(this.keys.suspectEvent(p));
    const replies = (await read.exec()) ?? [];
    return new Map(
      providers.map((p, i) => {
        const [count, event] = [replies[2 * i]?.[1], replies[2 * i + 1]?.[1]];
        return [
          p,
          {
            count: typeof count === 'number' ? count : 0,
            event: decodeJson(suspectEventCodec, typeof event === 'string' ? event : null),
          },
        ];
      }),
    );
  }

  async suspectSample(provider: string, max: number): Promise<string[]> {
    if (max <= 0) return [];
    return this.redis.srandmember(this.keys.suspects(provider), max);
  }

  async setStoreOutage(outage: Pause | null, ttlMs = 5_000): Promise<void> {
    if (outage) await this.redis.set(this.keys.storeDown, JSON.stringify(outage), 'PX', ttlMs);
    else await this.redis.del(this.keys.storeDown);
  }

  async storeOutage(): Promise<Pause | null> {
    return decodePause(await this.redis.get(this.keys.storeDown));
  }

  async alive(): Promise<boolean> {
    return (await this.redis.exists(this.keys.alive)) === 1;
  }

  async markAlive(now: Date): Promise<void> {
    await this.redis.set(this.keys.alive, now.toISOString());
    this.aliveSeen = undefined;
  }

  forgot(): Promise<boolean> {
    const now = Date.now();
    if (!this.aliveSeen || now - this.aliveSeen.at > FORGOT_ASKED_EVERY_MS)
      this.aliveSeen = { at: now, alive: this.alive().catch(() => true) };
    return this.aliveSeen.alive.then((alive) => !alive);
  }
}
