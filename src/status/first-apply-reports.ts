/**
 * The log's account of long first applies (a new provider, a cold start): while a provider has
 * declared consumers not applied yet, a line every {@link PROGRESS_EVERY_MS} that says how many of
 * them are applied, at what rate and about how long is left (`first-apply-progress.ts`), and one
 * line when the last is applied. It speaks for every worker process at once: it counts what the
 * queue's Redis knows (each provider's asked-at set), not what this process did; the consumers
 * themselves say their first transitions at debug level, each kept in its record's history.
 *
 * A line is said when the count moved since the last one (and once as outstanding first applies
 * are first seen), so that consumers that cannot be applied (a grant secret missing, a spec the
 * policy refuses) are said once, not every few seconds: their own lines and the status say why.
 */
import type { Logger } from '../logging/logger.js';
import type { NoteReads } from '../queue/coordination.js';
import {
  FirstApplyPace,
  firstApplyCount,
  outstanding,
  progressWords,
  type FirstApplyCount,
} from './first-apply-progress.js';

/** How often the progress of outstanding first applies is said, at most (ms). */
export const PROGRESS_EVERY_MS = 5_000;

export interface FirstApplyReportsOptions {
  notes: Pick<NoteReads, 'askedCounts'>;
  /** Each provider's declared consumers, as its contributions were last read (a provider not read yet: absent). */
  declared: () => ReadonlyMap<string, number>;
  logger: Logger;
  /** Between two looks at the counts (ms; default {@link PROGRESS_EVERY_MS}). */
  everyMs?: number;
}

/** What was last said of a provider's outstanding first applies. */
interface Said {
  applied: number;
  /** When its first line was said (ms), and how many were applied then. */
  since: number;
  from: number;
}

export class FirstApplyReports {
  private readonly pace = new FirstApplyPace();
  private readonly said = new Map<string, Said>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(private readonly options: FirstApplyReportsOptions) {}

  /** Looks at once, then every interval, until stopped. */
  start(): void {
    this.look();
    this.timer = setInterval(() => this.look(), this.options.everyMs ?? PROGRESS_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.looking;
  }

  /** One look, unless the last has not ended; a look that fails says nothing (the status names what does not answer). */
  private look(): void {
    if (this.busy) return;
    this.busy = true;
    this.looking = this.lookOnce()
      .catch(() => undefined)
      .finally(() => (this.busy = false));
  }

  private async lookOnce(): Promise<void> {
    const declared = this.options.declared();
    const names = [...declared.keys()];
    if (names.length === 0) return;
    const asked = await this.options.notes.askedCounts(names);
    const at = Date.now();
    for (const name of names) this.sayOf(name, firstApplyCount(asked.get(name) ?? 0, declared.get(name) ?? 0), at);
  }

  private sayOf(provider: string, count: FirstApplyCount, at: number): void {
    const { logger } = this.options;
    const said = this.said.get(provider);
    if (!outstanding(count)) {
      this.pace.forget(provider);
      if (!said) return;
      this.said.delete(provider);
      const seconds = Math.max(1, Math.round((at - said.since) / 1000));
      const applied = count.applied - said.from;
      logger.info(
        { provider, applied: count.applied, declared: count.declared },
        `first applies of ${provider} done: all ${count.declared.toLocaleString('en-US')} declared consumers applied (${applied.toLocaleString('en-US')} in ${seconds} s, ${Math.round(applied / seconds).toLocaleString('en-US')}/s)`,
      );
      return;
    }
    const progress = this.pace.observe(provider, count, at);
    if (said?.applied === count.applied) return;
    this.said.set(provider, { applied: count.applied, since: said?.since ?? at, from: said?.from ?? count.applied });
    logger.info(
      {
        provider,
        applied: progress.applied,
        declared: progress.declared,
        perSecond: progress.perSecond === null ? null : Math.round(progress.perSecond),
        leftS: progress.leftS,
      },
      `first applies of ${provider}: ${progressWords(progress)}`,
    );
  }
}
