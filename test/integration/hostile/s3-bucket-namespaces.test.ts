/**
 * Bucket namespaces that cannot overlap, on a real SeaweedFS: with the default
 * `bucketPrefix: "{id}-"` and ids that may hold `-`, consumer `acme` could ask for `acme-*`,
 * which covers consumer `acme-eu`'s `acme-eu-data` (measured: read 200, delete 204). Now an id
 * holding the separator its provider's template puts after `{id}` is refused at load, naming
 * file, line and field, and nothing is sent for it; with `{id}.` ids may hold `-`, SeaweedFS
 * takes the dotted bucket names, and `acme` is denied `acme-eu`'s bucket by the server (403).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { accessKeyIdOf } from '../../../src/adapters/s3-identities/identity.js';
import { S3ErrorReply } from '../../../src/adapters/s3-identities/s3-requests.js';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';
import { s3ByHand } from '../engine/s3-login.js';

interface Tenant {
  id: string;
  login: string;
  secret: string;
  buckets: string[];
}

/**
 * One S3 request signed by curl's SigV4 (as `backends-smoke.test.ts` does) with this key pair, its body's digest signed
 * too: the HTTP status.
 */
async function s3Status(
  b: BackendEndpoint,
  keyId: string,
  secret: string,
  method: string,
  path: string,
  body?: string,
): Promise<number> {
  const { stdout } = await promisify(execFile)('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-m',
    '10',
    '-X',
    method,
    '--aws-sigv4',
    'aws:amz:us-east-1:s3',
    '--user',
    `${keyId}:${secret}`,
    ...(body === undefined
      ? []
      : [
          '-H',
          `x-amz-content-sha256: ${createHash('sha256').update(body).digest('hex')}`,
          '-H',
          'content-type: application/octet-stream',
          '--data-binary',
          body,
        ]),
    '-w',
    '%{http_code}',
    `http://${b.host}:${b.port}${path}`,
  ]);
  return Number(stdout);
}

/** Whether the server has an IAM user of this name. */
async function userExists(b: BackendEndpoint, login: string): Promise<boolean> {
  try {
    await s3ByHand(b, 'ListUserTags', { UserName: login });
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && error.code === 'NoSuchEntity') return false;
    throw error;
  }
}

/** Declares `tenants` as the provider's consumers (their grant secrets written beside the others). */
function declare(f: EngineFixture, tenants: Tenant[]): string {
  for (const t of tenants) writeFileSync(join(f.dir, 'grants', `${t.id}.secret`), `${t.secret}\n`, { mode: 0o600 });
  const file = join(f.dir, 'contributions/cache.yaml');
  writeFileSync(
    file,
    `consumers:\n${tenants.map((t) => `  - id: ${t.id}\n    login: ${t.login}\n    secret: ../grants/${t.id}.secret\n    values: { buckets: ${JSON.stringify(t.buckets)} }\n`).join('')}`,
  );
  return file;
}

const tenant = (f: EngineFixture, id: string, buckets: string[]): Tenant => ({
  id,
  login: `t${f.tag}_${id}`,
  secret: randomBytes(18).toString('base64url'),
  buckets,
});

describe('s3-identities: bucket namespaces that cannot overlap', () => {
  const fixture = engineFixtures();
  const timing = { verifyEvery: '2s', checkTimeout: '2s' };

  it('under the default "{id}-", refuses the id "acme-eu" (its "-" would put its buckets under "acme-*"), naming file, line and field, and sends nothing for it', async () => {
    const s3 = sharedBackend('s3');
    const f = await fixture({ adapterKind: 's3-identities', provider: s3, consumers: 0, timing });
    const acme = tenant(f, 'acme', ['acme-*']);
    const acmeEu = tenant(f, 'acme-eu', ['acme-eu-data']);
    const file = declare(f, [acme, acmeEu]);
    await f.start();

    const stateOf = async (id: string) => (await f.status()).consumers.find((s) => s.consumer === `cache/${id}`);
    await f.until(
      'acme held and acme-eu refused',
      async () => {
        const [a, b] = await Promise.all([stateOf('acme'), stateOf('acme-eu')]);
        return a?.state === 'held' && b !== undefined && b.reason !== null;
      },
      60_000,
    );
    const refused = await stateOf('acme-eu');
    expect(refused?.healthy).toBe(false);
    expect(refused?.reason).toContain(
      `${file}:6: id: "acme-eu" holds "-", the separator the provider's bucketPrefix "{id}-" puts after {id}: a consumer whose id is "acme" would own every name this one's start with`,
    );
    expect(await userExists(s3, acmeEu.login)).toBe(false);
    expect(await userExists(s3, acme.login)).toBe(true);
  });

  it('with "{id}.", "acme-eu" is served; SeaweedFS takes the dotted bucket names and denies "acme" the other\'s bucket (403)', async () => {
    const s3 = sharedBackend('s3');
    const f = await fixture({
      adapterKind: 's3-identities',
      provider: s3,
      consumers: 0,
      timing,
      policy: '{ bucketPrefix: "{id}." }',
    });
    // the operator makes the buckets (holdfast never does), each with an object
    const [own, other] = [`acme.p${f.tag}`, `acme-eu.d${f.tag}`];
    for (const bucket of [own, other]) {
      expect(await s3Status(s3, s3.admin.username, s3.admin.password, 'PUT', `/${bucket}`), bucket).toBe(200);
      expect(
        await s3Status(s3, s3.admin.username, s3.admin.password, 'PUT', `/${bucket}/card`, 'secret data'),
        bucket,
      ).toBe(200);
    }
    const acme = tenant(f, 'acme', ['acme.*']);
    const acmeEu = tenant(f, 'acme-eu', [other]);
    declare(f, [acme, acmeEu]);
    await f.start();
    await f.until(
      'both held',
      async () => (await f.status()).consumers.filter((s) => s.state === 'held').length === 2,
      60_000,
    );

    const as = (t: Tenant) => (method: string, path: string) =>
      s3Status(s3, accessKeyIdOf('cache', t.login), t.secret, method, path);
    // the policy's change reaches the gateway's identities within a moment: asked until its own object answers
    await f.until('acme reads its own bucket', async () => (await as(acme)('GET', `/${own}/card`)) === 200, 30_000);
    await f.until(
      'acme-eu reads its own bucket',
      async () => (await as(acmeEu)('GET', `/${other}/card`)) === 200,
      30_000,
    );
    expect(await as(acme)('GET', `/${other}/card`)).toBe(403);
    expect(await as(acme)('DELETE', `/${other}/card`)).toBe(403);
    expect(await as(acme)('GET', `/${other}`)).toBe(403);
    expect(await as(acmeEu)('GET', `/${other}/card`)).toBe(200);
  });
});
