/**
 * Contested logins: a consumer someone else manages too. holdfast is the owner and keeps
 * restoring what is declared; when it keeps finding its work undone, it says so.
 *
 * **What counts (a finding).** A quiet heal (`workers/consumer-run.ts`): a routine check found a
 * consumer that was served, its brake not engaged, with the spec and grant secret the record
 * says were applied, not held; holdfast applied it again and a check confirmed it held. So the
 * login was as holdfast applied it, then changed outside holdfast. Its reason (`kind`) decides:
 *
 * - the login was there but not as applied (`rules-differ`, `password-differs`, `disabled`, an
 *   adapter's own word such as `roles-differ`): counted;
 * - the login was `missing`: counted only while the provider's backend kept its other logins. A
 *   second consumer of the provider found missing within {@link lossWaveMs} of another is a
 *   **loss wave** (a backend restarted empty, restored, flushed): neither counts (the first
 *   one's finding is taken back), nor does any other found missing while the wave goes on.
 *
 * Not counted: a confirmation that still does not find it held (another tool undoing the apply
 * at once): that is the brake's case, said at each re-apply, and quarantine's (`machines/`);
 * a heal through the record (a rotation, a spec changed, `holdfast check`).
 *
 * **Contested.** {@link CONTESTED_AFTER} findings within the provider's `contestedWindow`
 * (default 1 h): said once (one log line, {@link contestedWords}), counted
 * (`holdfast_contested_consumers{provider}`), shown in the status and on the consumer's page.
 * Each further finding keeps it contested; a window without one ends it (the gauge drops).
 *
 * Counted in the queue's Redis by one script sent with the heal's timeline note (the same round
 * trip; `coordination/contest-script.ts`); a routine check that finds the consumer held does
 * nothing more. Bounded: per consumer the times of its last {@link CONTESTED_AFTER} findings,
 * forgotten after the window; per provider (and queue shard) at most {@link CONTEST_CAP}
 * consumers with findings, and as many contested.
 */
import type { NotHeldReason } from '../adapters/adapter.js';
import { formatDuration } from '../config/duration.js';

/** Findings within the window that make a consumer contested. */
export const CONTESTED_AFTER = 3;
/** Consumers with findings (and contested consumers) kept per provider and queue shard at most; the oldest go first. */
export const CONTEST_CAP = 10_000;
/** A finding's words are cut to this many characters. */
export const FINDING_WORDS_MAX = 200;

/** A quiet heal's finding, as the counting script takes it. Never a secret: the deep check's words. */
export interface Finding {
  /** The consumer's key (`<provider>/<id>`). */
  key: string;
  /** The adapter's reason, as its `kind` (what the rule decides on). */
  reason: NotHeldReason;
  /** What the deep check said differed: `rules-differ (commands: the backend also has +@all …)`. */
  words: string;
  /** When it was found (ms since the epoch). */
  at: number;
  /** The provider's `contestedWindow` (ms). */
  windowMs: number;
  /** How close two logins found missing make a loss wave (ms; {@link lossWaveMs}). */
  waveMs: number;
}

/** What the script returned of a finding. */
export type FindingOutcome =
  /**
   * Part of a loss wave: not counted; `waveBegan`: this finding is the one that showed the wave (once per wave), whose
   * first finding was at `waveSince` (ms).
   */
  | { counted: false; waveBegan?: boolean; waveSince?: number }
  /**
   * Counted: `findings` within the window (or, contested, since it became so); `became`: this one made it contested.
   */
  | { counted: true; findings: number; contested: boolean; became: boolean };

/** A contested consumer, as the status and the consumer's page show it. */
export interface ContestedConsumer {
  key: string;
  /** Findings since it became contested (at least {@link CONTESTED_AFTER}). */
  findings: number;
  /** When it became contested, and when it stops being so unless found changed again (ms since the epoch). */
  since: number;
  until: number;
  /** The last finding's words. */
  last: string;
  /** The window it was counted in (ms). */
  windowMs: number;
}

/**
 * Two logins of a provider found missing within this of each other are a loss wave: twice its `verifyEvery` (its
 * checks are spread over one).
 */
export function lossWaveMs(verifyEveryMs: number): number {
  return 2 * verifyEveryMs;
}

/** A finding's words from the deep check's reason and detail (and node), cut to {@link FINDING_WORDS_MAX}. */
export function findingWords(reason: NotHeldReason, detail: string, node?: string): string {
  const words = `${reason}${node === undefined ? '' : ` on ${node}`} (${detail})`;
  return words.length > FINDING_WORDS_MAX ? `${words.slice(0, FINDING_WORDS_MAX - 2)}…)` : words;
}

/** Whether a finding of `reason` may be part of a loss wave (a login gone, not changed). */
export function mayBeLossWave(reason: NotHeldReason): boolean {
  return reason === 'missing';
}

/** `cache/photos is contested: changed outside holdfast 3 times in 1h, last: rules-differ (…)`. */
export function contestedWords(key: string, findings: number, windowMs: number, last: string): string {
  return `${key} is contested: changed outside holdfast ${findings} times in ${formatDuration(windowMs)}, last: ${last}`;
}
