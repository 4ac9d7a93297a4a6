/**
 * Whether the record store answers, asked by this process every second. While it does not,
 * nothing is done from a record that may be stale: a job that needs its record is put back
 * (before it calls a backend, or after a routine check, an interval later), and no job uses up
 * its attempts (its consumer's next step stays in the queue). Routine checks on trusted tickets
 * go on, and a heal of what the record says was applied needs no store (`workers/consumer-run.ts`):
 * a backend that forgot is healed all the same. Said once when the store stops answering, once
 * when it answers again.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../logging/logger.js';
import { storeReason } from './store-retry.js';

export interface StoreOutage {
  since: Date;
  reason: string;
}

export interface StoreWatchOptions {
  /** Where the store is, for the log (a URL without credentials). */
  where: string;
  logger: Logger;
  everyMs?: number;
  /** A ping not answered in this time counts as no answer (a frozen server accepts connections). */
  timeoutMs?: number;
  now?: () => Date;
  /** Tells others (the status) what the watch sees: the outage at every failed ping, null once it answers. */
  publish?: (outage: StoreOutage | null) => Promise<void>;
}

export class StoreWatch {
  private outage: StoreOutage | null = null;
  private timer: NodeJS.Timeout | undefined;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly db: Pick<Db, 'command'>,
    private readonly options: StoreWatchOptions,
  ) {}

  /** Why and since when the store does not answer, or null while it does. */
  get down(): StoreOutage | null {
    return this.outage;
  }

  start(): void {
    this.timer = setInterval(() => void this.ask(), this.options.everyMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Asks the store once (a ping still unanswered from before counts as no answer). */
  async ask(): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? 1500;
    if (this.pending) return this.failed(`no answer to a ping within ${timeoutMs} ms`);
    let timer: NodeJS.Timeout | undefined;
    const ping = this.db.command({ ping: 1 }).then(() => undefined);
    this.pending = ping
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.pending = undefined));
    try {
      await Promise.race([
        ping,
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error(`no answer to a ping within ${timeoutMs} ms`)), timeoutMs)),
        ),
      ]);
      this.answered();
    } catch (error) {
      this.failed(storeReason(error));
    } finally {
      clearTimeout(timer);
    }
  }

  private failed(reason: string): void {
    void this.options
      .publish?.(this.outage ?? { since: (this.options.now ?? (() => new Date()))(), reason })
      .catch(() => undefined);
    if (this.outage) return;
    this.outage = { since: (this.options.now ?? (() => new Date()))(), reason };
    this.options.logger.error(
      { store: this.options.where },
      `the record store at ${this.options.where} does not answer (${reason}): only routine checks run, and heals of what the records say was applied, until it does`,
    );
  }

  private answered(): void {
    if (!this.outage) return;
    void this.options.publish?.(null).catch(() => undefined);
    const ms = Date.now() - this.outage.since.getTime();
    this.outage = null;
    this.options.logger.info(
      { store: this.options.where },
      `the record store at ${this.options.where} answers again after ${Math.round(ms / 100) / 10} s; consumers are acted on again in full`,
    );
  }
}
