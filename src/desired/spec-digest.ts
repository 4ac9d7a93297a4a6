/**
 * What tells one delivered spec from another, as the sync keeps it for each consumer: 128 bits of
 * its hash, or for a refused one of its problems', in 22 or 23 characters (the sync keeps one per
 * consumer for the life of the process, so it is short and holds on to nothing else).
 */
import type { DesiredSpec } from '../store/consumer-record.js';
import { sha256Hex } from '../secrets/sha256.js';
import { ownString } from './own-string.js';

/** A digest's bytes: 1 for a refused spec (0 else), then its 128 bits. */
export const DIGEST_BYTES = 17;

/** The 17 bytes of `desired`'s digest ({@link DIGEST_BYTES}). */
export function specDigestBytes(desired: Pick<DesiredSpec, 'problems' | 'specHash'>): Buffer {
  const refused = desired.problems.length > 0;
  const hex = refused ? sha256Hex(desired.problems.join('\n')) : desired.specHash;
  return Buffer.concat([Buffer.of(refused ? 1 : 0), Buffer.from(hex.slice(0, 32), 'hex')]);
}

/** The digest of bytes as {@link specDigestBytes} gives them: its characters. */
export function digestText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + 1, DIGEST_BYTES - 1).toString('base64url');
  // flat: not a pair of strings joined
  return bytes[0] === 1 ? ownString(`!${text}`) : text;
}

export function specDigest(desired: Pick<DesiredSpec, 'problems' | 'specHash'>): string {
  return digestText(specDigestBytes(desired));
}
