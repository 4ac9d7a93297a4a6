/**
 * `s3-identities` on a real SeaweedFS: a policy document put by hand that grants what holdfast's does, in another
 * order or spelling (statements split and reordered, `Action` as a string, resources reordered and repeated, a `Sid`),
 * is held, and the consumer can still read and write; one that grants one action or bucket more, has no `Version`
 * (SeaweedFS then allows nothing) or carries a `Condition` is not held, with what differs in words.
 */
import { randomBytes } from 'node:crypto';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/adapters/adapter.js';
import {
  S3IdentitiesAdapter,
  s3Identities,
  type S3IdentitiesValues,
} from '../../../src/adapters/s3-identities/index.js';
import { accessKeyIdOf, POLICY_NAME } from '../../../src/adapters/s3-identities/identity.js';
import { S3Requests, type Credentials } from '../../../src/adapters/s3-identities/s3-requests.js';
import { sharedBackend } from '../../backends/index.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(10_000) });
const PROVIDER = 'test';
const b = sharedBackend('s3');
const s3Url = `http://${b.host}:${b.port}`;
const adminKeys = { accessKeyId: b.admin.username, secretAccessKey: b.admin.password };
const requests = new S3Requests(s3Url);

/** An S3 request signed as `who`: its HTTP status (what a client of the bucket sees). */
async function status(who: Credentials, method: 'GET' | 'PUT', path: string, body?: string): Promise<number> {
  const base = new URL(s3Url);
  const signer = new SignatureV4({
    service: 's3',
    region: 'us-east-1',
    credentials: who,
    sha256: Hash.bind(null, 'sha256'),
    uriEscapePath: true,
  });
  const headers = { host: base.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
  const signed = await signer.sign({
    method,
    protocol: base.protocol,
    hostname: base.hostname,
    port: Number(base.port),
    path,
    query: {},
    headers,
    body,
  });
  const response = await fetch(new URL(path, base), { method, headers: signed.headers, body: body ?? null });
  await response.arrayBuffer();
  return response.status;
}

const putPolicy = (login: string, document: unknown) =>
  requests.iam(
    adminKeys,
    'PutUserPolicy',
    { UserName: login, PolicyName: POLICY_NAME, PolicyDocument: JSON.stringify(document) },
    AbortSignal.timeout(10_000),
  );

describe('s3-identities: a policy document compared by what it allows', () => {
  const adapter = new S3IdentitiesAdapter(
    { url: s3Url, username: b.admin.username, password: b.admin.password },
    { provider: PROVIDER, adopt: false },
  );
  const login = `hfm_${hex(4)}`;
  const [one, two] = [`hfm-${hex(4)}-a`, `hfm-${hex(4)}-b`];
  const arn = (bucket: string, objects = false) => `arn:aws:s3:::${bucket}${objects ? '/*' : ''}`;
  const grant: Grant<S3IdentitiesValues> = {
    login,
    password: hex(12),
    values: s3Identities.valuesSchema.parse({ buckets: [one, two], actions: ['Read', 'Write', 'List'] }),
  };
  const consumer = { accessKeyId: accessKeyIdOf(PROVIDER, login), secretAccessKey: grant.password };

  beforeAll(async () => {
    for (const bucket of [one, two]) expect(await status(adminKeys, 'PUT', `/${bucket}`)).toBe(200);
    expect(await status(adminKeys, 'PUT', `/${one}/o`, 'hello')).toBe(200);
    await adapter.create(grant, within());
  });
  afterAll(async () => {
    await adapter.remove(login, within()).catch(() => undefined);
    await adapter.close();
  });

  /** The same grant in another spelling: four statements in another order, one action as a bare string. */
  const respelled = {
    Version: '2012-10-17',
    Statement: [
      { Sid: 'objects', Effect: 'Allow', Action: 's3:PutObject', Resource: [arn(two, true), arn(one, true)] },
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket', 's3:GetObject'],
        Resource: [arn(two), arn(one, true), arn(one), arn(two, true)],
      },
      {
        Effect: 'Allow',
        Action: ['s3:DeleteObject', 's3:GetObject', 's3:GetObject'],
        Resource: [arn(one, true), arn(two, true), arn(one, true)],
      },
      { Effect: 'Allow', Action: ['s3:PutObject', 's3:DeleteObject'], Resource: [arn(one), arn(two)] },
    ],
  };

  it('holds the grant put back by hand in another order and spelling, which the server applies alike', async () => {
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    await putPolicy(login, respelled);
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    await expect.poll(() => status(consumer, 'GET', `/${one}/o`), { timeout: 10_000 }).toBe(200);
    expect(await status(consumer, 'PUT', `/${two}/p`, 'x')).toBe(200);
  });

  it('does not hold one action more, and names it', async () => {
    await putPolicy(login, {
      ...respelled,
      Statement: [...respelled.Statement, { Effect: 'Allow', Action: 's3:GetObjectTagging', Resource: arn(two, true) }],
    });
    expect(await adapter.holds(grant, within())).toEqual({
      held: false,
      reason: 'rules-differ',
      detail: `policy "${POLICY_NAME}": the server also allows s3:GetObjectTagging on ${arn(two, true)}`,
    });
  });

  it('does not hold one bucket more, or one less, and names it', async () => {
    const other = `hfm-${hex(4)}-c`;
    await putPolicy(login, {
      ...respelled,
      Statement: [...respelled.Statement, { Effect: 'Allow', Action: 's3:ListBucket', Resource: arn(other) }],
    });
    expect(await adapter.holds(grant, within())).toMatchObject({
      held: false,
      detail: `policy "${POLICY_NAME}": the server also allows s3:ListBucket on ${arn(other)}`,
    });
    await putPolicy(login, { ...respelled, Statement: respelled.Statement.slice(1) });
    expect(await adapter.holds(grant, within())).toMatchObject({
      held: false,
      // the resources named in order, whatever order the random bucket names fall in
      detail: `policy "${POLICY_NAME}": the server does not allow s3:PutObject on ${[arn(one, true), arn(two, true)].sort().join(', ')}`,
    });
  });

  it('does not hold the grant without its Version, which the server then applies as nothing', async () => {
    await putPolicy(login, { Statement: respelled.Statement });
    expect(await adapter.holds(grant, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringMatching(/Version is absent/) as unknown,
    });
    await expect.poll(() => status(consumer, 'GET', `/${one}/o`), { timeout: 10_000 }).toBe(403);
  });

  it('does not hold the grant under a Condition, and a create restores it', async () => {
    await putPolicy(login, {
      ...respelled,
      Statement: respelled.Statement.map((s) => ({ ...s, Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } })),
    });
    expect(await adapter.holds(grant, within())).toMatchObject({
      held: false,
      detail: expect.stringMatching(/statement 1 carries Condition/) as unknown,
    });
    await adapter.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    await expect.poll(() => status(consumer, 'GET', `/${one}/o`), { timeout: 10_000 }).toBe(200);
  });
});
