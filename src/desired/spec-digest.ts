/** What tells one delivered spec from another: its hash, or for a refused one its problems'. */
import type { DesiredSpec } from '../store/consumer-record.js';
import { sha256Hex } from '../secrets/sha256.js';

export function specDigest(desired: Pick<DesiredSpec, 'problems' | 'specHash'>): string {
  return desired.problems.length > 0 ? `rejected-${sha256Hex(desired.problems.join('\n')).slice(0, 16)}` : desired.specHash;
}
