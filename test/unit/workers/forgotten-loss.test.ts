/**
 * A check that finds a consumer not held says whether the backend forgot it (`NOT_HELD` with
 * `forgot`): every node that lacks it began holding none of its logins (a new run, a node that
 * joined) after the consumer was last asked. The chart does not count such a loss toward the
 * brake (rule 2 brakes a disagreement, not a backend that restarted empty).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Adapter, HoldsAnswer } from '../../../src/adapters/adapter.js';
import type { Incarnation } from '../../../src/adapters/incarnation.js';
import { secretFingerprint } from '../../../src/secrets/fingerprint.js';
import { photosCheck } from '../../support/photos-check.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-forgotten-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'a-grant-secret-long-enough';
const secretPath = join(dir, 'photos.secret');
writeFileSync(secretPath, `${PASSWORD}\n`, { mode: 0o600 });
const KEY = Buffer.alloc(32, 9);
const ASKED_AT = 10_000;

/** A backend of two nodes that lacks the login on `lacking`, its nodes' incarnations as given. */
function backend(lacking: string | undefined, forgotAt: Record<string, number | undefined>): Adapter {
  const answer: HoldsAnswer = {
    held: false,
    reason: 'missing',
    detail: 'the backend has no such ACL user',
    ...(lacking === undefined ? {} : { node: lacking }),
  };
  const incarnations = new Map<string, Incarnation>(
    Object.entries(forgotAt).map(([node, at]) => [
      node,
      { node, seq: 2, seenAt: new Date(0).toISOString(), ...(at === undefined ? {} : { forgotAt: at }) },
    ]),
  );
  return {
    create: () => Promise.resolve(),
    remove: () => Promise.resolve(),
    close: () => Promise.resolve(),
    authenticates: () => Promise.resolve(false),
    holds: () => Promise.resolve(answer),
    incarnations: () => incarnations,
  };
}

async function found(adapter: Adapter, memoAt: number | null) {
  const memo = memoAt === null ? null : { at: memoAt, outcome: 'held' as const, detail: null, rev: 1, deepAt: memoAt };
  const appliedSecretMac = secretFingerprint(KEY, PASSWORD);
  return (await photosCheck(adapter, { dir, fingerprintKey: KEY, appliedSecretMac, memo })).event;
}

describe('a loss the backend forgot', () => {
  it('is said so when the node lacking it began anew after the consumer was last asked', async () => {
    const event = await found(backend('n:2', { 'n:1': undefined, 'n:2': ASKED_AT + 1 }), ASKED_AT);
    expect(event).toMatchObject({ type: 'NOT_HELD', node: 'n:2', forgot: true });
  });

  it('on one node lacking it everywhere, counts every node', async () => {
    expect(await found(backend(undefined, { 'n:1': ASKED_AT + 1 }), ASKED_AT)).toMatchObject({ forgot: true });
    const one = await found(backend(undefined, { 'n:1': ASKED_AT + 1, 'n:2': undefined }), ASKED_AT);
    expect(one).not.toHaveProperty('forgot');
  });

  it('is not, when the node began anew before the last ask, never did, is unknown, or nothing was asked before', async () => {
    for (const [adapter, memoAt] of [
      [backend('n:2', { 'n:2': ASKED_AT - 1 }), ASKED_AT],
      [backend('n:2', { 'n:2': undefined }), ASKED_AT],
      [backend('n:3', { 'n:2': ASKED_AT + 1 }), ASKED_AT],
      [backend('n:2', { 'n:2': ASKED_AT + 1 }), null],
    ] as const) {
      const event = await found(adapter, memoAt);
      expect(event).toMatchObject({ type: 'NOT_HELD' });
      expect(event).not.toHaveProperty('forgot');
    }
  });
});
