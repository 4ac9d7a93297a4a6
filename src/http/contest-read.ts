/**
 * A consumer's contest for its page, read within a deadline: a queue Redis that does not answer leaves the page saying
 * so, never hung.
 */
import type { ContestReads } from '../queue/coordination.js';
import { contestedOf, type ContestedStatus } from '../status/contested-status.js';
import { TIMELINE_READ_MS } from '../history/timeline-read.js';

/** The consumer's contest at `now` (null: not contested); `unknown` when it could not be read in time. */
export async function readContest(
  reads: Pick<ContestReads, 'contestOf'>,
  key: string,
  now: number,
  deadlineMs = TIMELINE_READ_MS,
): Promise<ContestedStatus | null | 'unknown'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'unknown'>((resolve) => {
    timer = setTimeout(() => resolve('unknown'), deadlineMs);
  });
  const read = reads.contestOf(key, now).then(
    (contest) => (contest ? contestedOf({ count: 1, listed: [contest] }).consumers[0]! : null),
    () => 'unknown' as const,
  );
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}
