/**
 * What the `s3-identities` adapter writes on a real SeaweedFS, and when. Every IAM write there
 * (`TagUser`, `CreateAccessKey`, `PutUserPolicy`) makes the server rewrite every identity it holds
 * (docs/scaling.md), so an apply sends only the writes its identity lacks: a new one its four, a
 * held one none. And what happens when several apply at once, or someone else is quicker.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import {
  S3IdentitiesAdapter,
  s3Identities,
  type S3IdentitiesValues,
} from '../../../src/adapters/s3-identities/index.js';
import { accessKeyIdOf, MARK_TAG, policyDocument } from '../../../src/adapters/s3-identities/identity.js';
import { policyDifference } from '../../../src/adapters/s3-identities/policy-meaning.js';
import { blocks, first } from '../../../src/adapters/s3-identities/s3-requests.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend } from '../../backends/index.js';
import { s3ByHand, s3Login } from '../engine/s3-login.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 60_000) => ({ signal: AbortSignal.timeout(ms) });
const PROVIDER = 'writes';
const ownership = { provider: PROVIDER, adopt: false };
const ACTIONS = [
  'ListUserTags',
  'ListAccessKeys',
  'ListUserPolicies',
  'GetUserPolicy',
  'CreateUser',
  'TagUser',
  'CreateAccessKey',
  'DeleteAccessKey',
  'PutUserPolicy',
  'DeleteUserPolicy',
];

const b = sharedBackend('s3');
const admin: AdminConnection = {
  url: `http://${b.host}:${b.port}`,
  username: b.admin.username,
  password: b.admin.password,
};
const byHand = (action: string, params: Record<string, string>) => s3ByHand(b, action, params);

function grantFor(login: string, buckets: string[]): Grant<S3IdentitiesValues> {
  return { login, password: hex(12), values: s3Identities.valuesSchema.parse({ buckets }) };
}

/** The IAM requests `adapter` sent while `work` ran, by action (those not sent left out). */
async function sentDuring(adapter: S3IdentitiesAdapter, work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = ACTIONS.map((a) => adapter.iamCalls(a));
  await work();
  const sent: Record<string, number> = {};
  ACTIONS.forEach((a, i) => {
    const n = adapter.iamCalls(a) - before[i]!;
    if (n > 0) sent[a] = n;
  });
  return sent;
}

/** One S3 request signed by curl's SigV4 with this key pair (its body's digest signed too): the HTTP status. */
async function s3Status(keyId: string, secret: string, method: string, path: string, body?: string): Promise<number> {
  const payload =
    body === undefined
      ? []
      : ['-H', `x-amz-content-sha256: ${createHash('sha256').update(body).digest('hex')}`, '--data-binary', body];
  const { stdout } = await promisify(execFile)('curl', [
    ...['-s', '-o', '/dev/null', '-m', '10', '-X', method, '--aws-sigv4', 'aws:amz:us-east-1:s3'],
    ...['--user', `${keyId}:${secret}`, ...payload, '-w', '%{http_code}', `http://${b.host}:${b.port}${path}`],
  ]);
  return Number(stdout);
}

describe('s3-identities: the writes an apply sends', () => {
  let adapter: S3IdentitiesAdapter;
  const logins: string[] = [];
  const buckets: string[] = [];

  beforeAll(() => {
    adapter = new S3IdentitiesAdapter(admin, ownership);
  });
  afterAll(async () => {
    for (const l of logins) await adapter.remove(l, within()).catch(() => undefined);
    for (const l of logins) await byHand('DeleteUser', { UserName: l }).catch(() => undefined);
    for (const bucket of buckets) {
      await s3Status(b.admin.username, b.admin.password, 'DELETE', `/${bucket}/object`).catch(() => 0);
      await s3Status(b.admin.username, b.admin.password, 'DELETE', `/${bucket}`).catch(() => 0);
    }
    await adapter.close();
  });

  const newLogin = (what: string) => {
    const login = `hfw_${what}_${hex(4)}`;
    logins.push(login);
    return login;
  };

  it('makes a new identity with one read and its four writes: no list of keys or policies it cannot have', async () => {
    const login = newLogin('new');
    const grant = grantFor(login, [`${login.replaceAll('_', '-')}-a`]);
    const sent = await sentDuring(adapter, () => adapter.create(grant, within()));
    expect(sent).toEqual({ ListUserTags: 1, CreateUser: 1, TagUser: 1, CreateAccessKey: 1, PutUserPolicy: 1 });
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    expect(await s3Login(b, PROVIDER, login, grant.password)).toBe(true);
  });

  it('applies a held identity again without a write, and writes its policy once its values change', async () => {
    const login = newLogin('held');
    const grant = grantFor(login, [`${login.replaceAll('_', '-')}-a`]);
    await adapter.create(grant, within());
    const again = await sentDuring(adapter, () => adapter.create(grant, within()));
    expect(Object.keys(again).filter((a) => !a.startsWith('List') && !a.startsWith('Get'))).toEqual([]);

    const wider = { ...grant, values: { ...grant.values, buckets: [...grant.values.buckets, `${login}-b`] } };
    const changed = await sentDuring(adapter, () => adapter.create(wider, within()));
    expect(changed['PutUserPolicy']).toBe(1);
    expect(await adapter.holds(wider, within())).toEqual({ held: true });
    expect(await adapter.holds(grant, within())).toMatchObject({ held: false, reason: 'rules-differ' });
  });

  it('refuses an identity someone else made between its read and its CreateUser, and leaves it as it is', async () => {
    const login = newLogin('race');
    const grant = grantFor(login, [`${login.replaceAll('_', '-')}-a`]);
    const realFetch = globalThis.fetch;
    // the other party is quicker: its user is made as holdfast's CreateUser goes out, after holdfast's read
    globalThis.fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      if (body.includes('Action=CreateUser&') && body.includes(`UserName=${login}&`)) {
        globalThis.fetch = realFetch;
        await byHand('CreateUser', { UserName: login });
        await byHand('TagUser', { UserName: login, 'Tags.member.1.Key': 'team', 'Tags.member.1.Value': 'theirs' });
      }
      return realFetch(input, init);
    };
    let sent: Record<string, number> | undefined;
    let error: unknown;
    try {
      sent = await sentDuring(adapter, () => adapter.create(grant, within()).catch((e: unknown) => (error = e)));
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(isHoldfastError(error, 'BACKEND_REFUSED')).toBe(true);
    expect((error as Error).message).toContain(`"${login}" was made by someone else`);
    expect(sent).toEqual({ ListUserTags: 1, CreateUser: 1 });
    const tags = await byHand('ListUserTags', { UserName: login });
    expect(tags).not.toContain(MARK_TAG);
    expect(tags).toContain('theirs');
    expect(blocks(await byHand('ListAccessKeys', { UserName: login }), 'member')).toEqual([]);
    expect(await byHand('ListUserPolicies', { UserName: login })).not.toContain('<member>');
    // asked again, it is someone else's user: refused, as one made by hand is
    const again: unknown = await adapter.create(grant, within()).catch((e: unknown) => e);
    expect(isHoldfastError(again, 'BACKEND_REFUSED')).toBe(true);
  });

  it('gives identities applied at once by two adapters each exactly its own policy', async () => {
    const other = new S3IdentitiesAdapter(admin, ownership);
    const grants = Array.from({ length: 6 }, (_, i) => {
      const login = newLogin(`many${i}`);
      const bucket = `${login.replaceAll('_', '-')}-a`;
      buckets.push(bucket);
      return grantFor(login, [bucket]);
    });
    try {
      await Promise.all(grants.map((g, i) => (i % 2 === 0 ? adapter : other).create(g, within(120_000))));
    } finally {
      await other.close();
    }
    for (const [i, g] of grants.entries()) {
      expect(await adapter.holds(g, within())).toEqual({ held: true });
      const policy = first(
        await byHand('GetUserPolicy', { UserName: g.login, PolicyName: 'holdfast-grant' }),
        'PolicyDocument',
      );
      expect(policyDifference(policy ?? '', policyDocument(g.values)!)).toBeUndefined();
      const neighbour = grants[(i + 1) % grants.length]!;
      expect(policyDifference(policy ?? '', policyDocument(neighbour.values)!)).toBeDefined();
    }
    // what each consumer's own key can do: its bucket's object, never its neighbour's
    for (const bucket of buckets.slice(-grants.length)) {
      expect(await s3Status(b.admin.username, b.admin.password, 'PUT', `/${bucket}`)).toBe(200);
      expect(await s3Status(b.admin.username, b.admin.password, 'PUT', `/${bucket}/object`, bucket)).toBe(200);
    }
    for (const [i, g] of grants.entries()) {
      const keyId = accessKeyIdOf(PROVIDER, g.login);
      const own = g.values.buckets[0]!;
      const neighbours = grants[(i + 1) % grants.length]!.values.buckets[0]!;
      expect(await s3Status(keyId, g.password, 'GET', `/${own}/object`)).toBe(200);
      expect(await s3Status(keyId, g.password, 'GET', `/${neighbours}/object`)).toBe(403);
    }
  }, 180_000);
});
