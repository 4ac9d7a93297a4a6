/**
 * The providers' timelines for a page, read within a deadline: a queue Redis that does not answer leaves the page
 * without pictures, never hung.
 */
import type { NoteReads } from '../queue/coordination.js';
import type { TimelineEvent } from '../queue/timeline-event.js';

/** What a timeline covers, and the pictures show: the last 24 h. */
export const TIMELINE_SPAN_MS = 24 * 3_600_000;

/** How long a page waits for its timelines (ms). */
export const TIMELINE_READ_MS = 1500;

/**
 * Each provider's events of the `spanMs` (24 h) before `now` (all it keeps: `Infinity`), by provider; null when they
 * could not be read in time.
 */
export async function readTimelines(
  reads: Pick<NoteReads, 'timeline'>,
  providers: readonly string[],
  now: number,
  deadlineMs = TIMELINE_READ_MS,
  spanMs = TIMELINE_SPAN_MS,
): Promise<Map<string, TimelineEvent[]> | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), deadlineMs);
  });
  const read = Promise.all(
    providers.map(async (p) => [p, await reads.timeline(p, Math.max(0, now - spanMs))] as const),
  ).then(
    (pairs) => new Map(pairs),
    () => null,
  );
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}
