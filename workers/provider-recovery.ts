/**
 * When a provider comes back, its could-not-ask consumers are asked again promptly, spread over
 * a few seconds, rather than at their next interval:
 *
 * - while a provider cannot be asked, one of its could-not-ask consumers is asked again every
 *   few seconds, so that the first answer is seen even when no other check is due;
 * - when it answers, all of them are asked again, half a second after the first sign (checks
 *   still failing from before join the set meanwhile), spread over 2 ms per consumer, at least
 *   two seconds and at most half an interval.
 *
 * The effects tell it what they see; the consumers it asks are the ones the queue's Redis holds.
 */
import { unitHash } from '../machines/delays.js';
import type { Logger } from '../src/logging/logger.js';
import type { ConsumerQueue } from '../src/schedule/consumer-queue.js';
import type { CouldNotAskSignals } from '../src/queue/coordination.js';

export interface ProviderRecoveryDeps {
  coordination: { readonly signals: CouldNotAskSignals };
  queue: Pick<ConsumerQueue, 'send' | 'sendLater'>;
  /** Each provider's `verifyEvery`, by name. */
  verifyEveryMs: ReadonlyMap<string, number>;
  logger: Logger;
}

const SETTLE_MS = 500;

export class ProviderRecovery {
  private readonly watching = new Map<string, NodeJS.Timeout>();
  private readonly asking = new Map<string, NodeJS.Timeout>();

  constructor(private readonly deps: ProviderRecoveryDeps) {}

  private interval(provider: string): number {
    return this.deps.verifyEveryMs.get(provider) ?? 60_000;
  }

  private warn(provider: string, what: string): (error: unknown) => void {
    return (error) =>
      this.deps.logger.warn(
        { provider, err: String(error) },
        `could not ${what} ${provider}'s could-not-ask consumers again: ${String(error)}`,
      );
  }

  /** A check could not ask `provider`: watch it until it answers. */
  couldNotAsk(provider: string): void {
    if (this.watching.has(provider)) return;
    const timer = setInterval(
      () => {
        void this.deps.coordination.signals.oneCouldNotAsk(provider).then(
          async (key) => {
            if (key !== null) return this.deps.queue.send(key, { type: 'CHECK_NOW' });
            clearInterval(timer);
            this.watching.delete(provider);
          },
          this.warn(provider, 'watch'),
        );
      },
      Math.min(2_000, this.interval(provider) / 2),
    );
    this.watching.set(provider, timer);
  }

  /** `provider` answered after this process saw it fail. */
  answeredAgain(provider: string): void {
    if (this.asking.has(provider)) return;
    const timer = setTimeout(() => {
      this.asking.delete(provider);
      void this.askAgain(provider).catch(this.warn(provider, 'ask'));
    }, SETTLE_MS);
    this.asking.set(provider, timer);
  }

  private async askAgain(provider: string): Promise<void> {
    const keys = await this.deps.coordination.signals.takeCouldNotAsk(provider);
    if (keys.length === 0) return;
    const spreadMs = Math.min(Math.max(2_000, keys.length * 2), this.interval(provider) / 2);
    this.deps.logger.info(
      { provider, consumers: keys.length },
      `${provider} answers again: asking its ${keys.length} could-not-ask consumers again over ${Math.round(spreadMs / 100) / 10} s`,
    );
    await this.deps.queue.sendLater(
      keys.map((key) => ({ key, delayMs: unitHash(key) * spreadMs })),
      { type: 'CHECK_NOW' },
    );
  }

  stop(): void {
    for (const timer of [...this.watching.values(), ...this.asking.values()]) clearTimeout(timer);
    this.watching.clear();
    this.asking.clear();
  }
}
