/**
 * A read made when scraped, bounded by a deadline, one at a time: a source that does not answer
 * in time (a frozen server) makes the scrape say so instead of hanging the scraper, and what it
 * last answered is shown meanwhile. A read still unanswered from an earlier scrape is not
 * repeated (nothing piles up on a server that does not answer).
 */
export interface ReadResult<T> {
  /** What the source last answered (this time, or earlier), or undefined when it never did. */
  value: T | undefined;
  /** Whether it answered this time, within the deadline. */
  fresh: boolean;
}

export class LatestRead<T> {
  private last: T | undefined;
  private pending: Promise<T> | undefined;

  constructor(private readonly source: () => Promise<T>) {}

  async read(deadlineMs: number): Promise<ReadResult<T>> {
    if (!this.pending) {
      const started = this.source();
      this.pending = started;
      void started
        .then(
          (value) => {
            this.last = value;
          },
          () => undefined,
        )
        .finally(() => {
          if (this.pending === started) this.pending = undefined;
        });
    }
    const pending = this.pending;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
    try {
      const value = await Promise.race([pending, late]);
      if (value === 'late') return { value: this.last, fresh: false };
      this.last = value;
      return { value, fresh: true };
    } catch {
      return { value: this.last, fresh: false };
    } finally {
      clearTimeout(timer);
    }
  }
}
