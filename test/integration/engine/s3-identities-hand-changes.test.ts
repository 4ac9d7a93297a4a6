/**
 * End to end through the engine on a real SeaweedFS: an access key deleted by hand, a secret
 * changed by hand and a policy widened by hand, each healed at the next check, with the log
 * saying what differed.
 */
import { describe, expect, it } from 'vitest';
import { accessKeyIdOf, POLICY_NAME } from '../../../src/adapters/s3-identities/identity.js';
import { first } from '../../../src/adapters/s3-identities/s3-requests.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';
import { s3ByHand } from './s3-login.js';

describe('s3-identities: changes made by hand through IAM', () => {
  const fixture = engineFixtures();

  it('are each undone at the next check: a deleted key (missing), a changed secret (password-differs), a widened policy (rules-differ)', async () => {
    const provider = sharedBackend('s3');
    const f = await fixture({
      adapterKind: 's3-identities',
      provider,
      consumers: 3,
      timing: { verifyEvery: '2s', checkTimeout: '1500ms', deepCheckEvery: '2s' },
    });
    await f.startHeld();
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    await f.until('every record settled', () => f.settled());
    const [deleted, resecreted, widened] = f.consumers as [Consumer, Consumer, Consumer];
    const keyOf = (c: Consumer) => accessKeyIdOf('cache', c.login);
    const wide = JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: ['arn:aws:s3:::*'] }],
    });
    const policyOf = async (c: Consumer) =>
      decodeURIComponent(
        first(
          await s3ByHand(provider, 'GetUserPolicy', { UserName: c.login, PolicyName: POLICY_NAME }),
          'PolicyDocument',
        ) ?? '',
      );

    const changedAt = Date.now();
    await s3ByHand(provider, 'DeleteAccessKey', { UserName: deleted.login, AccessKeyId: keyOf(deleted) });
    await s3ByHand(provider, 'DeleteAccessKey', { UserName: resecreted.login, AccessKeyId: keyOf(resecreted) });
    await s3ByHand(provider, 'CreateAccessKey', {
      UserName: resecreted.login,
      AccessKeyId: keyOf(resecreted),
      SecretAccessKey: 'changed-by-hand-1',
    });
    await s3ByHand(provider, 'PutUserPolicy', {
      UserName: widened.login,
      PolicyName: POLICY_NAME,
      PolicyDocument: wide,
    });
    expect(await policyOf(widened)).toContain('s3:*');

    // the next check comes within one interval (2 s ± 5%); each check is deep (deepCheckEvery = verifyEvery)
    const healedMs = await f.until(
      'all three healed',
      async () =>
        (await f.canLogin(deleted)) && (await f.canLogin(resecreted)) && !(await policyOf(widened)).includes('s3:*'),
      15_000,
    );
    console.log(`[s3 hand changes] healed ${healedMs} ms after the changes (verifyEvery 2 s)`);
    const said = (c: Consumer) =>
      f
        .logsFor(c)
        .filter((l) => (l.time as number) >= changedAt)
        .map((l) => l.msg);
    expect(
      said(deleted).some((m) => m.startsWith('not held (missing: ')),
      said(deleted).join('\n'),
    ).toBe(true);
    expect(
      said(resecreted).some((m) => m.startsWith('not held (password-differs: ')),
      said(resecreted).join('\n'),
    ).toBe(true);
    expect(
      said(widened).some((m) => m.startsWith('not held (rules-differ: ')),
      said(widened).join('\n'),
    ).toBe(true);
    expect(await f.canLogin({ ...resecreted, password: 'changed-by-hand-1' })).toBe(false);
    expect(await f.canLogin(widened)).toBe(true);
    await f.until('every consumer held', () => f.allHeld());
  });
});
