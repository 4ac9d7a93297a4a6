/**
 * What tells one delivered spec from another, as the sync keeps it for each consumer: 128 bits of
 * its hash, or for a refused one of its problems', in 22 or 23 characters (the sync keeps one per
 * consumer for the life of the process, so it is short and holds on to nothing else).
 */
import type { DesiredSpec } from '../store/consumer-record.js';
import { sha256Hex } from '../secrets/sha256.js';
import { ownString } from './own-string.js';

const short = (hex: string) => Buffer.from(hex.slice(0, 32), 'hex').toString('base64url');

export function specDigest(desired: Pick<DesiredSpec, 'problems' | 'specHash'>): string {
  return desired.problems.length > 0 ? ownString(`!${short(sha256Hex(desired.problems.join('\n')))}`) : short(desired.specHash);
}
