/**
 * The machine's waits, pure functions of its context and timing. Jitter is derived from
 * the consumer's key, so each consumer keeps its own phase and a crowd applied at the same
 * moment spreads out over the interval, without any randomness in the machine.
 */
/** The machine's timing, in milliseconds (a provider's configuration adds the effects' own). */
export interface ConsumerTiming {
  /** Each applied consumer is asked this often, jittered. */
  verifyEveryMs: number;
  /** The brake's doubling intervals stop growing here. */
  brakeMaxMs: number;
  /** First retry of a failed apply or remove; doubles, never beyond `verifyEveryMs`. */
  retryBaseMs: number;
  /** Fraction of `verifyEvery` by which consumers are spread, in [0, 1). */
  jitter: number;
  /** A missing grant secret is a quiet wait this long, then a warning. */
  secretGraceMs: number;
  /** Rules that still differ after the brake waited at `brakeMaxMs` this long in all: quarantined. Absent: never. */
  quarantineAfterMs?: number | undefined;
}

/** A stable number in [0, 1) from a string (FNV-1a). */
export function unitHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 2 ** 32;
}

/** The one jitter formula: `ms` shifted by up to ±spread/2 of it, by where `unit` (in [0, 1)) falls. */
export function jittered(ms: number, spread: number, unit: number): number {
  return ms * (1 + spread * (unit - 0.5));
}

/** The wait between checks: `verifyEvery`, shifted by up to ±jitter/2 of it. */
export function verifyDelay(key: string, t: ConsumerTiming): number {
  return Math.round(jittered(t.verifyEveryMs, t.jitter, unitHash(key)));
}

/**
 * The wait before a consumer's first check after its first apply: anywhere in [v/2, 3v/2), by
 * its key. A new provider's consumers applied together in a burst are then first checked
 * spread over a whole interval, as the routine checks are, not all one interval after the burst.
 */
export function firstCheckDelay(key: string, t: Pick<ConsumerTiming, 'verifyEveryMs'>): number {
  return Math.round(t.verifyEveryMs * (0.5 + unitHash(`${key}#first`)));
}

/** The brake after the n-th successful re-apply that is still not held (n ≥ 2): 2v, 4v, … ≤ brakeMax. */
export function brakeDelay(brakeCount: number, t: ConsumerTiming): number {
  return Math.min(t.verifyEveryMs * 2 ** Math.max(brakeCount - 1, 0), t.brakeMaxMs);
}

/** The wait before the n-th retry of a failed apply or remove (n ≥ 1): doubling, never beyond `verifyEvery`. */
export function retryDelay(attempt: number, t: ConsumerTiming): number {
  return Math.min(t.retryBaseMs * 2 ** Math.max(attempt - 1, 0), t.verifyEveryMs);
}

/** The first brake count whose brake waits `brakeMaxMs` (at least 2: the first brake follows the second re-apply). */
function firstBrakeAtMax(t: ConsumerTiming): number {
  let n = 2;
  while (brakeDelay(n, t) < t.brakeMaxMs && n < 64) n++;
  return n;
}

/**
 * Whether a consumer checked after its `brakeCount`-th brake has braked at `brakeMaxMs` for
 * `quarantineAfterMs` in all (and at least once): then its rules, still differing, are quarantined.
 */
export function quarantineDue(brakeCount: number, t: ConsumerTiming): boolean {
  if (t.quarantineAfterMs === undefined) return false;
  const atMax = brakeCount - firstBrakeAtMax(t) + 1;
  return atMax >= 1 && atMax * t.brakeMaxMs >= t.quarantineAfterMs;
}
