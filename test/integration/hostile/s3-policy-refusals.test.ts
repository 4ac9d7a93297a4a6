/**
 * What an `s3-identities` provider's policy withholds, asked for in a contributions file: a
 * bucket outside the provider's prefix, the `Admin` action, and a grant secret of 200
 * characters (SeaweedFS takes at most 128). Each is refused with the file, line and field,
 * and nothing is sent: the server never hears of those logins. The consumer beside them is served.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { S3ErrorReply } from '../../../src/adapters/s3-identities/s3-requests.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';
import { s3ByHand } from '../engine/s3-login.js';

/** Whether the server has an IAM user of this name. */
async function userExists(login: string): Promise<boolean> {
  try {
    await s3ByHand(sharedBackend('s3'), 'ListUserTags', { UserName: login });
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && error.code === 'NoSuchEntity') return false;
    throw error;
  }
}

describe('s3-identities: what the policy withholds', () => {
  const fixture = engineFixtures();

  it('refuses a bucket outside the prefix, Admin and a 200-character secret, each naming file, line and field, and sends nothing', async () => {
    const f = await fixture({
      adapterKind: 's3-identities',
      provider: sharedBackend('s3'),
      consumers: 4,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
    });
    const [fine, outside, admin, long] = f.consumers as [Consumer, Consumer, Consumer, Consumer];
    const values: Record<string, string> = {
      [fine.id]: `{ buckets: ["${fine.id}-a"] }`,
      [outside.id]: `{ buckets: ["${fine.id}-a"] }`,
      [admin.id]: `{ buckets: ["${admin.id}-a"], actions: [Read, Admin] }`,
      [long.id]: `{ buckets: ["${long.id}-a"] }`,
    };
    const file = join(f.dir, 'contributions/cache.yaml');
    writeFileSync(
      file,
      `consumers:\n${f.consumers.map((c) => `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: ${values[c.id]}\n`).join('')}`,
    );
    writeFileSync(long.secretPath, `${'k'.repeat(200)}\n`);
    await f.start();

    const stateOf = async (c: Consumer) => (await f.status()).consumers.find((s) => s.consumer === c.key);
    await f.until(
      'the fine consumer held and the others refused',
      async () => {
        const [a, b, c, d] = await Promise.all([fine, outside, admin, long].map(stateOf));
        return a?.state === 'held' && [b, c, d].every((s) => s !== undefined && s.reason !== null);
      },
      30_000,
    );
    const status = await f.status();
    console.log(status.consumers.map((c) => `${c.consumer} ${c.state}: ${c.reason}`).join('\n'));
    expect(await f.canLogin(fine)).toBe(true);

    const reasonOf = (c: Consumer) => status.consumers.find((s) => s.consumer === c.key)?.reason ?? '';
    // the consumer's entry in the file (its line), then the field
    expect(reasonOf(outside)).toContain(`${file}:6`);
    expect(reasonOf(outside)).toMatch(/values\.buckets\[0\]: "c0000-a" is outside the bucket prefix "c0001-"/);
    expect(reasonOf(admin)).toContain(`${file}:10`);
    expect(reasonOf(admin)).toMatch(
      /values\.actions\[1\]: "Admin" is refused: the provider's policy does not set allowAdmin/,
    );
    expect(reasonOf(long)).toContain(
      `grant secret ${long.secretPath} holds 200 characters; an S3 secret key holds at most 128`,
    );
    for (const c of [outside, admin, long])
      expect(status.consumers.find((s) => s.consumer === c.key)?.healthy).toBe(false);
    // nothing was sent for them: the server has no such user
    for (const c of [outside, admin, long]) expect(await userExists(c.login), c.id).toBe(false);
    expect(await userExists(fine.login)).toBe(true);
    // and no secret in what the engine said
    expect(f.rawLog.join('\n')).not.toContain('k'.repeat(129));
  });
});
