/**
 * A check whose grant secret's fingerprint is not the one the record keeps (`effects.check`):
 * rotated, or fingerprinted under another fingerprint key, which the fingerprints alone cannot
 * tell apart. The backend is asked deeply with the secret: held, the fingerprint is kept
 * (`HELD` with its `secretMac`) and nothing is applied; not held, it is a rotation (`CHANGED`);
 * could not ask, nothing is applied. An adapter that cannot be asked is applied, as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Adapter, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import { secretFingerprint } from '../../../src/secrets/fingerprint.js';
import { photosCheck } from '../../support/photos-check.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-fingerprint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'a-grant-secret-long-enough';
const secretPath = join(dir, 'photos.secret');
writeFileSync(secretPath, `${PASSWORD}\n`, { mode: 0o600 });
const KEY = Buffer.alloc(32, 9);

/** A backend answering `holds` with `answer` (or failing), recording what it was asked. */
class Backend implements Adapter {
  readonly calls: string[] = [];
  constructor(private readonly answer: HoldsAnswer | Error) {}
  create(): Promise<void> {
    return Promise.resolve();
  }
  authenticates(grant: Grant): Promise<boolean> {
    this.calls.push('authenticates');
    return Promise.resolve(grant.password === PASSWORD);
  }
  holds(): Promise<HoldsAnswer> {
    this.calls.push('holds');
    return this.answer instanceof Error ? Promise.reject(this.answer) : Promise.resolve(this.answer);
  }
  remove(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function checked(backend: Adapter, appliedSecretMac: string) {
  // a deep check a moment ago: the next one due is light
  const memo = { at: Date.now(), outcome: 'held' as const, detail: null, rev: 1, deepAt: Date.now() };
  return photosCheck(backend, { dir, fingerprintKey: KEY, appliedSecretMac, memo });
}

const HELD: HoldsAnswer = { held: true };
const FINGERPRINT = secretFingerprint(KEY, PASSWORD);

describe('a fingerprint that differs', () => {
  it('is kept when the backend, asked deeply, holds the consumer with this secret: nothing applied', async () => {
    const backend = new Backend(HELD);
    expect(await checked(backend, 'made-under-another-key')).toEqual({
      event: { type: 'HELD', secretMac: FINGERPRINT },
      deep: true,
    });
    expect(backend.calls).toEqual(['holds']);
  });

  it('is a rotation when the backend does not hold the consumer with this secret', async () => {
    const backend = new Backend({ held: false, reason: 'password-differs', detail: 'the password differs' });
    expect(await checked(backend, 'the-old-secret')).toMatchObject({
      event: { type: 'CHANGED', what: 'grant secret rotated' },
    });
  });

  it('applies nothing when the backend cannot be asked', async () => {
    const backend = new Backend(new Error('connection refused'));
    expect((await checked(backend, 'made-under-another-key')).event).toMatchObject({ type: 'CHECK_FAILED' });
  });

  it('is applied, as before, when the adapter cannot be asked', async () => {
    const adapter: Adapter = {
      create: () => Promise.resolve(),
      remove: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    expect((await checked(adapter, 'made-under-another-key')).event).toEqual({
      type: 'CHANGED',
      what: 'grant secret rotated',
    });
  });
});

describe('a fingerprint that is the same', () => {
  it('leaves the routine check light, and carries no fingerprint', async () => {
    const backend = new Backend(HELD);
    expect(await checked(backend, FINGERPRINT)).toEqual({ event: { type: 'HELD' }, deep: false });
    expect(backend.calls).toEqual(['authenticates']);
  });
});
