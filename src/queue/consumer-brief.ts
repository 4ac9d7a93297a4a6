/**
 * A consumer's record in brief, kept in the queue's Redis beside its revision, so that the
 * status counts and lists consumers without reading every record (on FerretDB any read but
 * one by `_id` decodes every document). Written after every record write and by every sweep;
 * never a secret.
 */
import { z } from 'zod';
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import { currentStateName } from '../../machines/former-states.js';
import type { LastCheck } from '../store/consumer-record.js';

export interface ConsumerBrief {
  /** The record's revision: an older brief never replaces a newer one. */
  rev: number;
  /** `unreadable`: a record this holdfast cannot read (a newer machine version); `reason` says why. */
  state: ConsumerStateName | 'unreadable';
  /** Since when (ms since the epoch). */
  since: number;
  /**
   * Since when the consumer has not been served (ms), through every unserved state since it
   * left a served one (or since its oldest remembered transition); absent while it is served,
   * and in briefs written before this field existed.
   */
  unservedSince?: number;
  login: string;
  brakeCount: number;
  reason: string | null;
  /** When the record's wait ends (ms), or null. */
  dueAt: number | null;
  /** The last check as of the record's last write. */
  lastCheck: { at: number; outcome: LastCheck['outcome']; detail: string | null } | null;
  /** A newer spec the policy refused (its problems), while the accepted one is kept; absent or null when none. */
  refused?: string | null;
}

/**
 * The brief's state as noted beside its revision: a consumer keeping its accepted spec over a refused one is marked
 * `!`.
 */
export function stateToken(brief: Pick<ConsumerBrief, 'state' | 'refused'>): string {
  return brief.refused ? `${brief.state}!` : brief.state;
}

/** `<state> <rev> <json>`: the state can be read without parsing the rest (counting 100k consumers). */
export function encodeBrief(brief: ConsumerBrief): string {
  const { state: _state, rev, ...rest } = brief;
  return `${stateToken(brief)} ${rev} ${JSON.stringify(rest)}`;
}

function tokenOf(encoded: string): string {
  const space = encoded.indexOf(' ');
  return space < 0 ? encoded : encoded.slice(0, space);
}

/** The brief's state, in this chart's words (a brief an earlier release wrote may name a state as it did). */
export function briefState(encoded: string): ConsumerBrief['state'] {
  return currentStateName(tokenOf(encoded).replace(/!$/, '')) as ConsumerBrief['state'];
}

/** Whether the consumer keeps its accepted spec while a newer one is refused. */
export function briefRefused(encoded: string): boolean {
  return tokenOf(encoded).endsWith('!');
}

/** What a check can find. */
export const CHECK_OUTCOMES = ['held', 'not-held', 'could-not-ask', 'changed'] as const satisfies ReadonlyArray<
  LastCheck['outcome']
>;

const restCodec: z.ZodType<Omit<ConsumerBrief, 'state' | 'rev'>> = z.object({
  since: z.number(),
  unservedSince: z.number().optional(),
  login: z.string(),
  brakeCount: z.number(),
  reason: z.string().nullable(),
  dueAt: z.number().nullable(),
  lastCheck: z.object({ at: z.number(), outcome: z.enum(CHECK_OUTCOMES), detail: z.string().nullable() }).nullable(),
  refused: z.string().nullable().optional(),
});

/** The brief `encodeBrief` wrote; null when `encoded` is not one (written by hand, or garbled). */
export function decodeBrief(encoded: string): ConsumerBrief | null {
  const match = /^(\S+) (\d+) (.*)$/s.exec(encoded);
  if (!match) return null;
  let rest: unknown;
  try {
    rest = JSON.parse(match[3]!);
  } catch {
    return null;
  }
  const decoded = restCodec.safeParse(rest);
  return decoded.success ? { state: briefState(match[1]!), rev: Number(match[2]), ...decoded.data } : null;
}
