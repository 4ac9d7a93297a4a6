/**
 * A consumer's record in brief, kept in the queue's Redis beside its revision, so that the
 * status counts and lists consumers without reading every record (on FerretDB any read but
 * one by `_id` decodes every document). Written after every record write and by every sweep;
 * never a secret.
 */
import type { ConsumerStateName } from '../../machines/consumer-machine.js';
import type { LastCheck } from '../store/consumer-record.js';

export interface ConsumerSummary {
  /** The record's revision: an older summary never replaces a newer one. */
  rev: number;
  /** `unreadable`: a record this holdfast cannot read (a newer machine version); `reason` says why. */
  state: ConsumerStateName | 'unreadable';
  /** Since when (ms since the epoch). */
  since: number;
  login: string;
  brakeCount: number;
  reason: string | null;
  /** When the record's wait ends (ms), or null. */
  dueAt: number | null;
  /** The last check as of the record's last write. */
  lastCheck: { at: number; outcome: LastCheck['outcome']; detail: string | null } | null;
}

/** `<state> <rev> <json>`: the state can be read without parsing the rest (counting 100k consumers). */
export function encodeSummary(summary: ConsumerSummary): string {
  const { state, rev, ...rest } = summary;
  return `${state} ${rev} ${JSON.stringify(rest)}`;
}

export function summaryState(encoded: string): ConsumerSummary['state'] {
  const space = encoded.indexOf(' ');
  return (space < 0 ? encoded : encoded.slice(0, space)) as ConsumerSummary['state'];
}

export function decodeSummary(encoded: string): ConsumerSummary {
  const [state, rev] = encoded.split(' ', 2) as [ConsumerSummary['state'], string];
  const json = encoded.slice(state.length + rev.length + 2);
  return { state, rev: Number(rev), ...(JSON.parse(json) as Omit<ConsumerSummary, 'state' | 'rev'>) };
}
