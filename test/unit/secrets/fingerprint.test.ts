/**
 * A secret's fingerprint, kept per path (`src/secrets/fingerprint.ts`), is the one its HMAC gives:
 * for the secret a path holds now, never one it held before.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintAt, Fingerprints, secretFingerprint } from '../../../src/secrets/fingerprint.js';

const key = randomBytes(32);

describe('a fingerprint kept', () => {
  it('is the HMAC of the secret the path holds now: a rotated secret gets its own', () => {
    const path = '/grants/photos.secret';
    expect(fingerprintAt(key, path, 'first-password')).toBe(secretFingerprint(key, 'first-password'));
    expect(fingerprintAt(key, path, 'first-password')).toBe(secretFingerprint(key, 'first-password'));
    expect(fingerprintAt(key, path, 'rotated-password')).toBe(secretFingerprint(key, 'rotated-password'));
    expect(fingerprintAt(key, path, 'first-password')).toBe(secretFingerprint(key, 'first-password'));
  });

  it('is under its own key: another key, another fingerprint', () => {
    const other = randomBytes(32);
    const path = '/grants/ledger.secret';
    expect(fingerprintAt(key, path, 'same-password')).toBe(secretFingerprint(key, 'same-password'));
    expect(fingerprintAt(other, path, 'same-password')).toBe(secretFingerprint(other, 'same-password'));
  });

  it('is one per path, at most its bound', () => {
    const kept = new Fingerprints(key, 2);
    for (const [path, secret] of [
      ['/a', 'secret-a-1'],
      ['/a', 'secret-a-2'],
      ['/b', 'secret-b'],
      ['/c', 'secret-c'],
    ])
      expect(kept.of(path!, secret!)).toBe(secretFingerprint(key, secret!));
    expect(kept.size).toBe(2);
  });
});
