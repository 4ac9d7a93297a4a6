/**
 * The `s3-identities` adapter against a real SeaweedFS: the conformance suite, then what only
 * an S3 server has: users made by hand (not marked), keys and policies changed by hand, and
 * the number of `CreateAccessKey`s routine checks send (none).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import {
  S3IdentitiesAdapter,
  s3Identities,
  type S3IdentitiesValues,
} from '../../../src/adapters/s3-identities/index.js';
import { accessKeyIdOf, MARK_TAG } from '../../../src/adapters/s3-identities/identity.js';
import { blocks, first, S3ErrorReply, S3Requests } from '../../../src/adapters/s3-identities/s3-requests.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend } from '../../backends/index.js';
import { freePort } from '../../backends/ports.js';
import { describeAdapterConformance } from './conformance.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });
const PROVIDER = 'test';
const ownership = { provider: PROVIDER, adopt: false };

const b = sharedBackend('s3');
/**
 * The S3 endpoint without the key pair its test URL carries: holdfast's configuration takes no credentials in a URL.
 */
const s3Url = `http://${b.host}:${b.port}`;
const admin: AdminConnection = { url: s3Url, username: b.admin.username, password: b.admin.password };
const adminKeys = { accessKeyId: b.admin.username, secretAccessKey: b.admin.password };
const requests = new S3Requests(s3Url);

/** An IAM action as the admin, by hand (what a person with the admin key would do). */
const byHand = (action: string, params: Record<string, string>) =>
  requests.iam(adminKeys, action, params, AbortSignal.timeout(10_000));

function grantFor(login: string, password: string, values: unknown = {}): Grant<S3IdentitiesValues> {
  const defaults = { buckets: [`${login.replaceAll('_', '-')}-a`] };
  return { login, password, values: s3Identities.valuesSchema.parse({ ...defaults, ...(values as object) }) };
}

/** Whether a `ListBuckets` signed with `login`'s derived key and `password` is accepted. */
async function canLogin(login: string, password: string): Promise<boolean> {
  try {
    await requests.listBuckets(
      { accessKeyId: accessKeyIdOf(PROVIDER, login), secretAccessKey: password },
      AbortSignal.timeout(10_000),
    );
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(error.code))
      return false;
    throw error;
  }
}

describeAdapterConformance('s3-identities', async () => {
  const nowhere = await freePort();
  return {
    connect: () => s3Identities.connect(admin, ownership),
    connectUnreachable: () => s3Identities.connect({ ...admin, url: `http://127.0.0.1:${nowhere}` }, ownership),
    grant: (login, password) => grantFor(login, password),
    canLogin,
  };
});

describe('s3-identities: users, keys and policies changed by hand', () => {
  let adapter: S3IdentitiesAdapter;
  const logins: string[] = [];

  beforeAll(() => {
    adapter = new S3IdentitiesAdapter(admin, ownership);
  });
  afterAll(async () => {
    for (const l of logins) {
      for (const key of blocks(await byHand('ListAccessKeys', { UserName: l }).catch(() => ''), 'member')) {
        await byHand('DeleteAccessKey', { UserName: l, AccessKeyId: first(key, 'AccessKeyId') ?? '' }).catch(
          () => undefined,
        );
      }
      await adapter.remove(l, within()).catch(() => undefined);
      await byHand('DeleteUser', { UserName: l }).catch(() => undefined);
    }
    await adapter.close();
  });

  async function held(values: unknown = {}): Promise<Grant<S3IdentitiesValues>> {
    const login = `hfs_${hex(5)}`;
    logins.push(login);
    const grant = grantFor(login, hex(12), values);
    await adapter.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    return grant;
  }

  it('refuses a user made by hand, without the mark, and leaves it untouched', async () => {
    const login = `hfs_hand_${hex(4)}`;
    logins.push(login);
    await byHand('CreateUser', { UserName: login });
    await byHand('CreateAccessKey', {
      UserName: login,
      AccessKeyId: `HAND${hex(6).toUpperCase()}`,
      SecretAccessKey: 'made-by-hand-1',
    });
    const keysBefore = await byHand('ListAccessKeys', { UserName: login });
    const grant = grantFor(login, hex(12));

    const error: unknown = await adapter.create(grant, within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED')).toBe(true);
    expect((error as Error).message).toContain(`"${login}"`);
    expect((error as Error).message).toContain('adopt');
    await adapter.remove(login, within());

    expect(first(await byHand('ListAccessKeys', { UserName: login }), 'AccessKeyId')).toBe(
      first(keysBefore, 'AccessKeyId'),
    );
    expect(await byHand('ListUserTags', { UserName: login })).not.toContain(MARK_TAG);
    expect(await byHand('ListUserPolicies', { UserName: login })).not.toContain('<member>');
    expect(await adapter.list(login, within())).toEqual([]);
    expect(await adapter.holds(grant, within())).toMatchObject({ held: false, reason: 'rules-differ' });
  });

  it('finishes a bare user (no tag, key or policy: what an apply cut short after CreateUser leaves) without adopt, but not one with any tag', async () => {
    const login = `hfs_bare_${hex(4)}`;
    const tagged = `hfs_tagged_${hex(4)}`;
    logins.push(login, tagged);
    await byHand('CreateUser', { UserName: login });
    const grant = grantFor(login, hex(12));
    await adapter.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    expect(await adapter.list(login, within())).toEqual([login]);

    await byHand('CreateUser', { UserName: tagged });
    await byHand('TagUser', { UserName: tagged, 'Tags.member.1.Key': 'team', 'Tags.member.1.Value': 'search' });
    const error: unknown = await adapter.create(grantFor(tagged, hex(12)), within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED')).toBe(true);
    expect(await byHand('ListUserTags', { UserName: tagged })).not.toContain(MARK_TAG);
  });

  it('takes a user made by hand over when the provider adopts, and marks it', async () => {
    const login = `hfs_adopt_${hex(4)}`;
    logins.push(login);
    await byHand('CreateUser', { UserName: login });
    const adopting = new S3IdentitiesAdapter(admin, { provider: PROVIDER, adopt: true });
    const grant = grantFor(login, hex(12));
    await adopting.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    expect(await adapter.list(login, within())).toEqual([login]);
  });

  it('says missing when the access key is deleted by hand, and a create heals it', async () => {
    const g = await held();
    await byHand('DeleteAccessKey', { UserName: g.login, AccessKeyId: accessKeyIdOf(PROVIDER, g.login) });
    expect(await adapter.authenticates(g, within())).toBe(false);
    expect(await adapter.holds(g, within())).toMatchObject({ held: false, reason: 'missing' });
    await adapter.create(g, within());
    expect(await adapter.holds(g, within())).toEqual({ held: true });
    expect(await canLogin(g.login, g.password)).toBe(true);
  });

  it('says password-differs when the secret is changed by hand', async () => {
    const g = await held();
    const keyId = accessKeyIdOf(PROVIDER, g.login);
    await byHand('DeleteAccessKey', { UserName: g.login, AccessKeyId: keyId });
    await byHand('CreateAccessKey', { UserName: g.login, AccessKeyId: keyId, SecretAccessKey: `other-${hex(8)}` });
    const answer = await adapter.holds(g, within());
    expect(answer).toMatchObject({ held: false, reason: 'password-differs' });
    expect(JSON.stringify(answer)).not.toContain(g.password);
  });

  it('says rules-differ when a policy is widened or added by hand', async () => {
    const widened = await held();
    const all = JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: ['arn:aws:s3:::*'] }],
    });
    await byHand('PutUserPolicy', { UserName: widened.login, PolicyName: 'holdfast-grant', PolicyDocument: all });
    expect(await adapter.holds(widened, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('s3:*') as unknown,
    });

    const added = await held();
    await byHand('PutUserPolicy', { UserName: added.login, PolicyName: 'extra', PolicyDocument: all });
    expect(await adapter.holds(added, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('"extra"') as unknown,
    });
    await adapter.create(added, within());
    expect(await adapter.holds(added, within())).toEqual({ held: true });
  });

  it('sends no CreateAccessKey for 100 routine light checks, 10 deep ones and a repeated create', async () => {
    const g = await held();
    const before = adapter.createAccessKeyCalls;
    let started = performance.now();
    for (let i = 0; i < 100; i++) expect(await adapter.authenticates(g, within())).toBe(true);
    const lightMs = (performance.now() - started) / 100;
    started = performance.now();
    for (let i = 0; i < 10; i++) expect(await adapter.holds(g, within())).toEqual({ held: true });
    const deepMs = (performance.now() - started) / 10;
    await adapter.create(g, within());
    expect(adapter.createAccessKeyCalls - before).toBe(0);
    console.info(
      `s3-identities: light check ${lightMs.toFixed(2)} ms, deep check ${deepMs.toFixed(2)} ms, CreateAccessKey sent: 0`,
    );
  });

  it('rotates with one CreateAccessKey: the new secret works, the old one fails', async () => {
    const g = await held();
    const before = adapter.createAccessKeyCalls;
    const rotated = { ...g, password: hex(12) };
    await adapter.create(rotated, within());
    expect(adapter.createAccessKeyCalls - before).toBe(1);
    expect(await canLogin(g.login, rotated.password)).toBe(true);
    expect(await canLogin(g.login, g.password)).toBe(false);
  });

  it('refuses a 200-character secret and sends nothing', async () => {
    const login = `hfs_${hex(5)}`;
    const secret = 's'.repeat(200);
    const error: unknown = await adapter.create(grantFor(login, secret), within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(/grant secret: holds 200 characters/);
    expect((error as Error).message).not.toContain(secret);
    expect(await adapter.holds(grantFor(login, secret), within())).toMatchObject({ held: false, reason: 'missing' });
  });

  it('reports a refused admin secret as BACKEND_UNAVAILABLE, without the secret', async () => {
    const wrong = `wrong-${hex(8)}`;
    const refused = new S3IdentitiesAdapter({ ...admin, password: wrong }, ownership);
    const error: unknown = await refused.holds(grantFor('hfs_nobody', hex(12)), within()).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/SignatureDoesNotMatch/);
    expect((error as Error).message).not.toContain(wrong);
  });
});
