/**
 * A grant-secret rotation on a real SeaweedFS, through the engine. Without an overlap the new
 * secret takes the usual key at once and the old one stops. With `rotationOverlap`, the old
 * secret keeps working on the usual key and the new one works on the overlap key until the
 * overlap ends; then the new secret is on the usual key and the overlap key is gone.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { accessKeyIdOf, overlapKeyIdOf } from '../../../src/adapters/s3-identities/identity.js';
import { blocks, first, S3ErrorReply, S3Requests } from '../../../src/adapters/s3-identities/s3-requests.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';
import { s3ByHand, s3Endpoint } from './s3-login.js';

const s3 = () => sharedBackend('s3');

/** Whether the gateway takes `secret` on `keyId`. */
async function signsWith(keyId: string, secret: string): Promise<boolean> {
  try {
    await new S3Requests(s3Endpoint(s3())).listBuckets(
      { accessKeyId: keyId, secretAccessKey: secret },
      AbortSignal.timeout(10_000),
    );
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply) return false;
    throw error;
  }
}

const keysOf = async (c: Consumer) =>
  blocks(await s3ByHand(s3(), 'ListAccessKeys', { UserName: c.login }), 'member').map((m) => first(m, 'AccessKeyId'));

describe('s3-identities: a grant-secret rotation', () => {
  const fixture = engineFixtures();

  it('without an overlap: the new secret works on the usual key at once, the old one stops', async () => {
    const f = await fixture({
      adapterKind: 's3-identities',
      provider: s3(),
      consumers: 1,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
    });
    await f.startHeld();
    const [c] = f.consumers as [Consumer];
    const usual = accessKeyIdOf('cache', c.login);
    const next = randomBytes(18).toString('base64url');
    writeFileSync(c.secretPath, `${next}\n`);
    await f.until('the new secret works on the usual key', () => signsWith(usual, next), 15_000);
    expect(await signsWith(usual, c.password)).toBe(false);
    expect(await keysOf(c)).toEqual([usual]);
  });

  it('with rotationOverlap: the old secret on the usual key and the new one on the overlap key, then the new one on the usual key only', async () => {
    const f = await fixture({
      adapterKind: 's3-identities',
      provider: s3(),
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      providerLines: ['rotationOverlap: 6s'],
    });
    await f.startHeld();
    const [c, other] = f.consumers as [Consumer, Consumer];
    const usual = accessKeyIdOf('cache', c.login);
    const overlap = overlapKeyIdOf('cache', c.login);
    const next = randomBytes(18).toString('base64url');
    writeFileSync(c.secretPath, `${next}\n`);
    await f.until('the new secret works on the overlap key', () => signsWith(overlap, next), 15_000);
    expect(await signsWith(usual, c.password)).toBe(true); // the overlap has just begun: the old secret still works
    expect((await keysOf(c)).sort()).toEqual([usual, overlap].sort());
    // light checks during the overlap pass: it stays held, with no re-apply at every interval
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await f.status()).consumers.find((s) => s.consumer === c.key)?.state).toBe('held');

    await f.until('the new secret on the usual key', () => signsWith(usual, next), 30_000);
    expect(await signsWith(usual, c.password)).toBe(false);
    await f.until('the overlap key deleted', async () => (await keysOf(c)).length === 1, 10_000);
    expect(await keysOf(c)).toEqual([usual]);
    expect(await f.canLogin(other)).toBe(true);
    await f.until('held', () => f.allHeld(), 10_000);
    await f.until('nothing unserved', async () => (await f.status()).healthy, 10_000);
    // under load an apply may miss its deadline and be retried (its warning says `timedOut`): behaviour, not a defect;
    // any other warning or error is one
    expect(f.logsFor(c).filter((l) => l.level >= 40 && !(l.level === 40 && l.timedOut === true))).toEqual([]);
    const moves = f
      .logsFor(c)
      .filter((l) => l.msg.includes(' → '))
      .map((l) => l.msg);
    expect(moves).toContain('held → applying: grant secret rotated');
    expect(moves).toContain(
      "held → applying: passwords besides the grant secret's accepted (a rotation overlap over, or added by hand): removing them",
    );
  });
});
