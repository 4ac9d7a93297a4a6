/**
 * Contested consumers in the status (`src/queue/contest.ts`): each provider's count and the
 * first {@link CONTESTED_LISTED} of them, each in one line. Shown, not red: a contested consumer
 * is held (holdfast put it back each time); the alert `HoldfastConsumerContested` warns.
 */
import { formatDuration } from '../config/duration.js';
import type { ProviderContests } from '../queue/coordination.js';
import { CONTESTED_AFTER, type ContestedConsumer } from '../queue/contest.js';

/** Contested consumers listed per provider at most (the rest are counted). */
export const CONTESTED_LISTED = 20;

/** A contested consumer as the status shows it (JSON). */
export interface ContestedStatus {
  consumer: string;
  /** Findings (changed outside holdfast, put back) since it became contested. */
  findings: number;
  since: string;
  /** When it stops being contested unless found changed again. */
  until: string;
  /** The last finding, in the deep check's words. */
  last: string;
  /** The provider's `contestedWindow` it was counted in (ms). */
  windowMs: number;
}

/** A provider's contested consumers, for its status. */
export function contestedOf(contests: ProviderContests | undefined): { count: number; consumers: ContestedStatus[] } {
  const consumers = (contests?.listed ?? []).map((c: ContestedConsumer) => ({
    consumer: c.key,
    findings: c.findings,
    since: new Date(c.since).toISOString(),
    until: new Date(c.until).toISOString(),
    last: c.last,
    windowMs: c.windowMs,
  }));
  return { count: contests?.count ?? consumers.length, consumers };
}

/**
 * `cache/photos is contested since …: changed outside holdfast 4 times (3 within 1h make it so), last: …; until …
 * unless changed again`.
 */
export function contestedLine(c: ContestedStatus): string {
  return (
    `${c.consumer} is contested since ${c.since}: changed outside holdfast ${c.findings} times (${CONTESTED_AFTER} within ${formatDuration(c.windowMs)} make it so), ` +
    `last: ${c.last}; holdfast put it back each time; contested until ${c.until} unless changed again`
  );
}
