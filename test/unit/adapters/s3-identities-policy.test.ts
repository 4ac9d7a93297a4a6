/**
 * The `s3-identities` values and policy: buckets under the provider's prefix, actions it
 * allows (`Admin` only with `allowAdmin`), secrets SeaweedFS takes, and the derived key id.
 */
import { describe, expect, it } from 'vitest';
import { s3Identities } from '../../../src/adapters/s3-identities/index.js';
import type { S3IdentitiesValues } from '../../../src/adapters/s3-identities/index.js';
import { accessKeyIdOf, policyDocument } from '../../../src/adapters/s3-identities/identity.js';
import { secretProblem } from '../../../src/adapters/s3-identities/policy.js';

const values = (input: unknown) => s3Identities.valuesSchema.parse(input);
const refuses = (input: unknown) => !s3Identities.valuesSchema.safeParse(input).success;
const policy = (input: unknown = {}) => s3Identities.policySchema.parse(input);
const subject = (v: Partial<S3IdentitiesValues>, id = 'photos', login = 'photos_app') => ({
  id,
  login,
  values: values(v),
});

describe('s3-identities values', () => {
  it('defaults to no bucket and Read, Write, List', () => {
    expect(values({})).toEqual({ buckets: [], actions: ['Read', 'Write', 'List'] });
  });

  it.each(['Photos-a', 'ab', 'a b', 'photos-*-x', 'x/y', '*', ''])('refuses the bucket pattern %j', (bucket) => {
    expect(refuses({ buckets: [bucket] })).toBe(true);
  });

  it('refuses an action SeaweedFS does not have', () => {
    expect(refuses({ actions: ['s3:*'] })).toBe(true);
  });
});

describe('s3-identities policy', () => {
  it('allows buckets under {id}- and the ordinary actions', () => {
    expect(
      s3Identities.violations(
        subject({ buckets: ['photos-a', 'photos-b*'], actions: ['Read', 'Write', 'List', 'Tagging'] }),
        policy(),
      ),
    ).toEqual([]);
  });

  it('refuses a bucket outside the prefix, naming the field', () => {
    expect(s3Identities.violations(subject({ buckets: ['photos-a', 'ledger-a'] }), policy())).toEqual([
      'values.buckets[1]: "ledger-a" is outside the bucket prefix "photos-" allowed by the provider\'s policy',
    ]);
    expect(s3Identities.violations(subject({ buckets: ['x.photos-*'] }), policy({ bucketPrefix: 'x.{id}-' }))).toEqual(
      [],
    );
    expect(
      s3Identities.violations(subject({ buckets: ['photos-*'] }), policy({ bucketPrefix: 'x.{id}-' })),
    ).toHaveLength(1);
  });

  it('refuses a bucket prefix that does not keep consumers apart', () => {
    for (const bucketPrefix of ['photos-', '{id}', 'x{id}y', '{id}{login}-']) {
      expect(s3Identities.policySchema.safeParse({ bucketPrefix }).success, bucketPrefix).toBe(false);
    }
    expect(s3Identities.policySchema.safeParse({ bucketPrefix: 'x.{id}.' }).success).toBe(true);
  });

  it('under the default "{id}-", refuses an id holding "-": "acme" could otherwise ask for "acme-*", which covers "acme-eu"\'s "acme-eu-data"', () => {
    expect(s3Identities.violations(subject({ buckets: ['acme-*'] }, 'acme'), policy())).toEqual([]);
    expect(s3Identities.violations(subject({ buckets: ['acme-eu-data'] }, 'acme-eu'), policy())).toEqual([
      expect.stringMatching(
        /^id: "acme-eu" holds "-", the separator the provider's bucketPrefix "\{id\}-" puts after \{id\}: a consumer whose id is "acme"/,
      ),
    ]);
    // with "{id}." ids may hold "-" (and not ".")
    const dotted = policy({ bucketPrefix: '{id}.' });
    expect(s3Identities.violations(subject({ buckets: ['acme-eu.data'] }, 'acme-eu'), dotted)).toEqual([]);
    expect(s3Identities.violations(subject({ buckets: ['acme.eu.data'] }, 'acme.eu'), dotted)).toHaveLength(1);
    expect(s3Identities.violations(subject({ buckets: ['acme-eu.data'] }, 'acme'), dotted)).toEqual([
      'values.buckets[0]: "acme-eu.data" is outside the bucket prefix "acme." allowed by the provider\'s policy',
    ]);
  });

  it('refuses Admin unless the policy sets allowAdmin', () => {
    expect(s3Identities.violations(subject({ actions: ['Read', 'Admin'] }), policy())).toEqual([
      'values.actions[1]: "Admin" is refused: the provider\'s policy does not set allowAdmin',
    ]);
    expect(s3Identities.violations(subject({ actions: ['Admin'] }), policy({ allowAdmin: true }))).toEqual([]);
    expect(s3Identities.policySchema.safeParse({ allowedActions: ['Admin'] }).success).toBe(false);
  });

  it('refuses an action the policy leaves out', () => {
    expect(s3Identities.violations(subject({ actions: ['Tagging'] }), policy({ allowedActions: ['Read'] }))).toEqual([
      'values.actions[0]: "Tagging" is not among the actions allowed by the provider\'s policy (Read)',
    ]);
  });

  it('refuses a 200-character secret, naming the field and not the secret', () => {
    const secret = 'k'.repeat(200);
    const problem = secretProblem(secret);
    expect(problem).toBe('holds 200 characters; an S3 secret key holds at most 128');
    expect(problem).not.toContain(secret.slice(0, 20));
    expect(secretProblem('k'.repeat(128))).toBeUndefined();
    expect(secretProblem('short')).toBe('holds 5 characters; an S3 secret key holds at least 8');
  });
});

describe('s3-identities identity', () => {
  it('derives a stable key id of 32 uppercase letters and digits per provider and login', () => {
    const id = accessKeyIdOf('assets', 'photos_app');
    expect(id).toMatch(/^HF[0-9A-F]{30}$/);
    expect(accessKeyIdOf('assets', 'photos_app')).toBe(id);
    expect(accessKeyIdOf('other', 'photos_app')).not.toBe(id);
    expect(accessKeyIdOf('assets', 'photos_ap')).not.toBe(id);
  });

  it('grants exactly the asked actions on the asked buckets and their objects, and nothing for no bucket', () => {
    expect(policyDocument(values({ buckets: ['photos-b', 'photos-a'], actions: ['List', 'Read'] }))).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['s3:GetObject', 's3:ListBucket'],
          Resource: [
            'arn:aws:s3:::photos-a',
            'arn:aws:s3:::photos-a/*',
            'arn:aws:s3:::photos-b',
            'arn:aws:s3:::photos-b/*',
          ],
        },
      ],
    });
    expect(policyDocument(values({}))).toBeNull();
  });
});
