/**
 * A node of a provider's backend seen as a new incarnation (restarted, re-initialised, promoted, answering again) may
 * have forgotten every login it held: every consumer of the provider becomes *suspect* and is asked now, not at its
 * next interval (rule 13). The suspects are kept in the queue's Redis, so that the status of any process says them
 * and each check that asks removes its consumer; a consumer still suspect from an earlier event is not asked twice
 * (a flapping node does not multiply the work). One line per event, and one when all its consumers were asked.
 */
import { unitHash } from '../machines/delays.js';
import type { IncarnationChange } from '../src/adapters/incarnation.js';
import { nodeEventWords } from '../src/adapters/incarnation-words.js';
import type { Logger } from '../src/logging/logger.js';
import type { SuspectSignals } from '../src/queue/coordination.js';
import type { ConsumerQueue } from '../src/schedule/consumer-queue.js';

export interface ProviderSuspectsDeps {
  coordination: { readonly signals: SuspectSignals };
  queue: Pick<ConsumerQueue, 'sendLater'>;
  /** Each provider's `verifyEvery`, by name. */
  verifyEveryMs: ReadonlyMap<string, number>;
  logger: Logger;
  now: () => Date;
  /** How often the suspects left are counted, until none is (default 500 ms). */
  drainEveryMs?: number;
}

/** The checks of this many suspects are spread over a millisecond each (at least half a second, at most a tenth of an interval). */
const SPREAD_PER_CONSUMER_MS = 1;

interface Draining {
  timer: NodeJS.Timeout;
  since: number;
  what: string;
}

export class ProviderSuspects {
  private readonly draining = new Map<string, Draining>();

  constructor(private readonly deps: ProviderSuspectsDeps) {}

  /** `change` was seen on a node of `provider`'s backend: its consumers are suspect, and asked now. */
  nodeChanged(provider: string, change: IncarnationChange): void {
    void this.suspect(provider, change).catch((error: unknown) =>
      this.deps.logger.warn(
        { provider, node: change.node, err: String(error) },
        `could not make ${provider}'s consumers suspect after ${change.node} ${nodeEventWords(change.why)}: ${String(error)}; they are asked at their next interval`,
      ),
    );
  }

  private async suspect(provider: string, change: IncarnationChange): Promise<void> {
    const at = this.deps.now();
    const what = `${provider} ${change.node} ${nodeEventWords(change.why)}`;
    const keys = await this.deps.coordination.signals.markSuspects(provider, {
      node: change.node,
      why: change.why,
      at: at.toISOString(),
    });
    this.deps.logger.info(
      { provider, node: change.node, why: change.why, consumers: keys.length, detail: change.detail },
      keys.length > 0
        ? `${what}: asking its ${keys.length} consumers now`
        : `${what}: none of its consumers to ask now (those not asked since an earlier event are being asked)`,
    );
    if (keys.length === 0) return;
    const interval = this.deps.verifyEveryMs.get(provider) ?? 60_000;
    const spreadMs = Math.min(Math.max(500, keys.length * SPREAD_PER_CONSUMER_MS), interval / 10);
    await this.deps.queue.sendLater(
      keys.map((key) => ({ key, delayMs: unitHash(key) * spreadMs })),
      { type: 'CHECK_NOW' },
    );
    this.watchDrain(provider, what, at.getTime());
  }

  /** Counts the suspects left every so often; says once when none is, and how long it took since the first event. */
  private watchDrain(provider: string, what: string, since: number): void {
    const watching = this.draining.get(provider);
    if (watching) {
      watching.what = what;
      return;
    }
    const timer = setInterval(() => {
      void this.deps.coordination.signals.suspects([provider]).then(
        (read) => {
          const left = read.get(provider)?.count ?? 0;
          const draining = this.draining.get(provider);
          if (left > 0 || !draining) return;
          clearInterval(draining.timer);
          this.draining.delete(provider);
          const tookS = Math.round((this.deps.now().getTime() - draining.since) / 100) / 10;
          this.deps.logger.info(
            { provider, tookMs: this.deps.now().getTime() - draining.since },
            `${draining.what}: all its consumers asked again, ${tookS} s after it was seen`,
          );
        },
        () => undefined,
      );
    }, this.deps.drainEveryMs ?? 500);
    timer.unref();
    this.draining.set(provider, { timer, since, what });
  }

  stop(): void {
    for (const { timer } of this.draining.values()) clearInterval(timer);
    this.draining.clear();
  }
}
