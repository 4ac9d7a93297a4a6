/**
 * Waits read already, known again by their stored text: a round takes a consumer's wait every
 * `verifyEvery`, and between two routine checks its stored data (ticket and seal) is the same text,
 * only its due time moved. Parsing that text again, and checking its seal again
 * (`workers/job-trust.ts`), were about a tenth of a routine check's engine CPU in its profile.
 *
 * A wait is known again only when its revision and its text, as the queue's Redis gives them now,
 * are exactly those it was read from (a full string comparison, no digest an attacker could aim
 * at): the job handed out is then the one made from that text, frozen, so nothing done with it
 * makes it say anything else. Whatever its seal said of that text, it says of the same text again.
 *
 * At most {@link MAX_KNOWN_WAITS} waits are known (about 1.8 KB of heap each, text and job: 18 MB); when full, a new
 * consumer's wait is read as before and not kept, so a fleet larger than that keeps the benefit for
 * the consumers known, and costs the others nothing more than before. A wait done with is let go.
 */
import type { TakenEntry } from '../queue/coordination.js';
import { deepFreeze } from '../text/deep-freeze.js';
import type { ConsumerJobData } from './consumer-queue.js';

/** A wait's wait job, as a round hands it (`due-waits.ts`). */
type WaitJob = Extract<ConsumerJobData, { kind: 'wait' }>;

/** How many waits are known at most. */
export const MAX_KNOWN_WAITS = 10_000;

interface Known {
  rev: string;
  text: string;
  job: WaitJob;
}

export class KnownWaits {
  private readonly known = new Map<string, Known>();

  constructor(private readonly max = MAX_KNOWN_WAITS) {}

  /** The job read from `entry`'s text before, when its revision and text are the same; else undefined. */
  get({ key, rev, text }: TakenEntry): WaitJob | undefined {
    const known = this.known.get(key);
    return known !== undefined && known.rev === rev && known.text === text ? known.job : undefined;
  }

  /** Keeps `job` as what `entry` reads as (frozen), when there is room or `entry`'s consumer is known already. */
  set({ key, rev, text }: TakenEntry, job: WaitJob): WaitJob {
    if (this.known.size >= this.max && !this.known.has(key)) return job;
    const frozen = deepFreeze(job);
    this.known.set(key, { rev, text, job: frozen });
    return frozen;
  }

  forget(key: string): void {
    this.known.delete(key);
  }

  get size(): number {
    return this.known.size;
  }
}
