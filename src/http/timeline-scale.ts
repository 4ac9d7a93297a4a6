/**
 * The timelines' scales: the last hour, to read an incident (on a 24 h axis a restart's losses and heals of a few
 * seconds fall in one pixel column), and the last 24 h. A page's `scale` is `1h` or `24h`, nothing else: anything
 * other is refused, never shown back. Without one, the last hour when something happened in it or the dashboard started
 * in it (a young run has no older past to show), else the 24 h.
 */
import { TIMELINE_SPAN_MS } from '../history/timeline-read.js';
import type { TimelineEvent } from '../queue/timeline-event.js';

const HOUR = 3_600_000;

export const TIMELINE_SCALES = {
  '1h': { spanMs: HOUR, tickMs: 10 * 60_000, words: 'the last hour', heading: 'Last hour' },
  '24h': { spanMs: TIMELINE_SPAN_MS, tickMs: 3 * HOUR, words: 'the last 24 h', heading: 'Last 24 hours' },
} as const;

export type TimelineScale = keyof typeof TIMELINE_SCALES;

/** The query parameter that chooses a scale. */
export const SCALE_PARAMETER = 'scale';

/** The answer to a page asked for another scale (400): fixed words, the value asked never shown back. */
export const SCALE_REFUSED = 'scale: 1h or 24h (or none, for the default)\n';

const isScale = (value: unknown): value is TimelineScale =>
  typeof value === 'string' && Object.hasOwn(TIMELINE_SCALES, value);

/**
 * A page's `scale` parameter as read from its query: absent or empty, none chosen (`undefined`); `1h` or `24h`, that
 * one; anything else (another word, a list, a value given twice), `null`: refused.
 */
export function chosenScale(raw: unknown): TimelineScale | undefined | null {
  if (raw === undefined || raw === '') return undefined;
  return isScale(raw) ? raw : null;
}

/**
 * The scale a page shows when none is chosen: the last hour when any event (a loss, a heal, a node event) falls in it or the dashboard started less
 * than an hour before `now` (`startedAt`), else the 24 h.
 */
export function defaultScale(
  events: Iterable<Pick<TimelineEvent, 'at'>>,
  now: number,
  startedAt = -Infinity,
): TimelineScale {
  if (startedAt > now - HOUR) return '1h';
  for (const e of events) if (e.at > now - HOUR && e.at <= now) return '1h';
  return '24h';
}
