/**
 * A node of a provider's backend seen as a new incarnation (restarted, re-initialised, promoted, answering again), or a
 * provider showing a wave of logins found `missing`, may have forgotten every login it held: every consumer that node
 * serves (for a wave: not asked since its first finding) becomes *suspect* and is asked now, not at its next interval (rule 13). Every node of a provider serves every
 * one of its consumers (rule 11: Redis holds each consumer on every node; PostgreSQL, MongoDB and SeaweedFS are one
 * server), so a node's suspects are its provider's consumers.
 *
 * Asked now means the consumer's routine wait brought forward in the due set (`src/queue/coordination/signals.ts`):
 * the ordinary rounds check it on its ticket and heal it quietly, as a routine check that finds a loss does (a heal is
 * an event, not a write: rule 3). The suspects are kept in the queue's Redis, so that the status of any process says
 * them and each check that asks removes its consumer. One still suspect from an earlier event is asked again at a new
 * event unless its asking is under way (its wait already due, or its check running): a flapping node does not
 * multiply the work, and a consumer whose check could not ask a node that was down is asked as soon as that node
 * answers, not at the stragglers' re-ask. One line per event, and one when all its consumers were asked.
 */
import type { IncarnationChange } from '../src/adapters/incarnation.js';
import { nodeEventWords, type NodeEventKind } from '../src/adapters/incarnation-words.js';
import type { Logger } from '../src/logging/logger.js';
import type { SuspectSignals } from '../src/queue/coordination.js';

export interface ProviderSuspectsDeps {
  coordination: { readonly signals: SuspectSignals };
  /** Starts a round of every shard now, so that the waits brought forward are taken at once (not at the next tick). */
  startRounds?: () => Promise<void>;
  /** The provider's node a loss wave is said of when its finding named none (its one node), by provider name. */
  nodeOf?: (provider: string) => string | undefined;
  logger: Logger;
  now: () => Date;
  /** How often the suspects left are counted, until none is (default 500 ms). */
  drainEveryMs?: number;
  /** Told once per node event, by the worker that notes all its suspects asked: how long that took (the metrics). */
  observer?: { suspectsAsked(provider: string, why: NodeEventKind, seconds: number): void };
}

/** A node event to make suspects of. */
interface NodeEvent {
  node: string;
  why: NodeEventKind;
  detail?: string | undefined;
  /** Only the consumers whose last check ended before this (ms): a loss wave's start. */
  askedBefore?: number | undefined;
}

interface Draining {
  timer: NodeJS.Timeout;
  since: number;
  what: string;
  /** Whether this process made consumers suspect (and so says when all were asked). */
  say: boolean;
  /** How many were left at the last count that saw fewer, and when (ms). */
  left: number;
  movedAt: number;
  /** How long without one asked before the stragglers are asked again (ms): doubles at each re-ask. */
  stuckMs: number;
}

/** Suspects none of which was asked for this long are asked again; then twice as long, up to a minute. */
const STUCK_FIRST_MS = 5_000;
const STUCK_MAX_MS = 60_000;

export class ProviderSuspects {
  private readonly draining = new Map<string, Draining>();

  constructor(private readonly deps: ProviderSuspectsDeps) {}

  /** `change` was seen on a node of `provider`'s backend: its consumers are suspect, and asked now. */
  nodeChanged(provider: string, change: IncarnationChange): void {
    this.start(provider, { node: change.node, why: change.why, detail: change.detail });
  }

  /**
   * `provider` showed a loss wave (`src/queue/contest.ts`), seen on `node` when its finding named one: its other
   * consumers are suspect too, unless a node event's are being asked already (the wave is that event's).
   */
  lossWave(provider: string, node: string | undefined, since: number): void {
    const where = node ?? this.deps.nodeOf?.(provider) ?? provider;
    void this.deps.coordination.signals
      .suspects([provider])
      .then((read) => {
        if ((read.get(provider)?.count ?? 0) > 0) return;
        this.start(provider, { node: where, why: 'loss-wave', askedBefore: since });
      })
      .catch((error: unknown) => this.failed(provider, where, 'loss-wave', error));
  }

  private start(provider: string, event: NodeEvent): void {
    void this.suspect(provider, event).catch((error: unknown) => this.failed(provider, event.node, event.why, error));
  }

  private failed(provider: string, node: string, why: NodeEventKind, error: unknown): void {
    this.deps.logger.warn(
      { provider, node, err: String(error) },
      `could not make ${provider}'s consumers suspect after ${node} ${nodeEventWords(why)}: ${String(error)}; they are asked at their next interval`,
    );
  }

  private async suspect(provider: string, { node, why, detail, askedBefore }: NodeEvent): Promise<void> {
    const at = this.deps.now();
    const what = `${provider} ${node} ${nodeEventWords(why)}`;
    const keys = await this.deps.coordination.signals.markSuspects(
      provider,
      { node, why, at: at.toISOString() },
      askedBefore,
    );
    if (keys.length > 0) await this.deps.startRounds?.().catch(() => undefined); // else at the rounds' next tick
    this.deps.logger.info(
      { provider, node, why, consumers: keys.length, detail },
      keys.length > 0
        ? `${what}: asking its ${keys.length} consumers now`
        : `${what}: none of its consumers to ask now (those not asked since an earlier event are being asked)`,
    );
    this.watchDrain(provider, what, at, keys.length > 0);
  }

  /**
   * Counts the suspects left every so often; once none is, notes on the event when (for the metrics) and, if this
   * process made them suspect, says how long it took since the first event.
   */
  private watchDrain(provider: string, what: string, at: Date, say: boolean): void {
    const watching = this.draining.get(provider);
    if (watching) {
      watching.what = what;
      watching.say ||= say;
      return;
    }
    const timer = setInterval(() => void this.drained(provider), this.deps.drainEveryMs ?? 500);
    timer.unref();
    const since = at.getTime();
    this.draining.set(provider, { timer, since, what, say, left: Infinity, movedAt: since, stuckMs: STUCK_FIRST_MS });
  }

  private async drained(provider: string): Promise<void> {
    const read = await this.deps.coordination.signals.suspects([provider]).catch(() => undefined);
    const draining = this.draining.get(provider);
    if (!read || !draining) return;
    const left = read.get(provider)?.count ?? 0;
    if (left > 0) return this.stragglers(provider, draining, left);
    clearInterval(draining.timer);
    this.draining.delete(provider);
    const asked = this.deps.now();
    const noted = await this.deps.coordination.signals.suspectsAsked(provider, asked.toISOString()).catch(() => null);
    if (noted) this.deps.observer?.suspectsAsked(provider, noted.why, (asked.getTime() - Date.parse(noted.at)) / 1000);
    if (!draining.say) return;
    const tookMs = asked.getTime() - draining.since;
    this.deps.logger.info(
      { provider, tookMs },
      `${draining.what}: all its consumers asked again, ${Math.round(tookMs / 100) / 10} s after it was seen`,
    );
  }

  /**
   * Some still suspect: when none was asked for a while (their checks could not ask, or a check was missed), their
   * waits are brought forward again, at doubling intervals (a node that does not answer is not hammered).
   */
  private async stragglers(provider: string, draining: Draining, left: number): Promise<void> {
    const now = this.deps.now().getTime();
    if (left < draining.left) [draining.left, draining.movedAt] = [left, now];
    if (now - draining.movedAt < draining.stuckMs) return;
    draining.movedAt = now;
    draining.stuckMs = Math.min(2 * draining.stuckMs, STUCK_MAX_MS);
    const asked = await this.deps.coordination.signals.askSuspectsAgain(provider).catch(() => 0);
    if (asked > 0) await this.deps.startRounds?.().catch(() => undefined);
    this.deps.logger.debug(
      { provider, left, asked },
      `${draining.what}: ${left} consumers still not asked, asking again`,
    );
  }

  /** Whether `provider`'s suspects are being watched drain (an event's not all asked yet, as this worker last saw). */
  watching(provider: string): boolean {
    return this.draining.has(provider);
  }

  stop(): void {
    for (const { timer } of this.draining.values()) clearInterval(timer);
    this.draining.clear();
  }
}
