/**
 * An S3 policy document compared by what it allows (policy-meaning.ts): any order, split, duplication or
 * string-or-list spelling of the grant's pairs is the grant; one pair more or less, another Version, another Effect or
 * a Condition is not, and the detail names what differs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { s3Identities } from '../../../src/adapters/s3-identities/index.js';
import { policyDocument, type PolicyDocument } from '../../../src/adapters/s3-identities/identity.js';
import { policyDifference, policyMeaning } from '../../../src/adapters/s3-identities/policy-meaning.js';
import { ACTIONS } from '../../../src/adapters/s3-identities/values.js';

const BUCKETS = ['app-a', 'app-b', 'app-c', 'app-logs'];

/** A grant's values and its document. */
const grants = fc
  .record({
    buckets: fc.shuffledSubarray(BUCKETS, { minLength: 1 }),
    actions: fc.shuffledSubarray([...ACTIONS], { minLength: 1 }),
  })
  .map((v) => policyDocument(s3Identities.valuesSchema.parse(v)) as PolicyDocument);

/** A list as the server may keep it: reordered, an item repeated, a one-item list as a bare string. */
const spelled = (items: string[]) =>
  fc
    .tuple(fc.shuffledSubarray(items, { minLength: items.length }), fc.nat(), fc.boolean(), fc.boolean())
    .map(([order, which, repeat, bare]) => {
      const list = repeat ? [...order, order[which % order.length]!] : order;
      return bare && list.length === 1 ? list[0]! : list;
    });

/** The grant's pairs split over statements: actions and resources each partitioned in up to three groups. */
function respelled(document: PolicyDocument) {
  const { Action: actions, Resource: resources } = document.Statement[0]!;
  return fc
    .record({
      actionGroup: fc.array(fc.nat(2), { minLength: actions.length, maxLength: actions.length }),
      resourceGroup: fc.array(fc.nat(2), { minLength: resources.length, maxLength: resources.length }),
      sid: fc.boolean(),
      bareStatement: fc.boolean(),
    })
    .chain(({ actionGroup, resourceGroup, sid, bareStatement }) => {
      const parts: Array<[string[], string[]]> = [];
      for (const a of [0, 1, 2]) {
        for (const r of [0, 1, 2]) {
          const as = actions.filter((_, i) => actionGroup[i] === a);
          const rs = resources.filter((_, i) => resourceGroup[i] === r);
          if (as.length > 0 && rs.length > 0) parts.push([as, rs]);
        }
      }
      const statements = fc.tuple(
        ...parts.map(([as, rs], i) =>
          fc
            .tuple(spelled(as), spelled(rs))
            .map(([Action, Resource]) => ({ ...(sid ? { Sid: `s${i}` } : {}), Effect: 'Allow', Action, Resource })),
        ),
      );
      return statements
        .chain((list) => fc.shuffledSubarray(list, { minLength: list.length }))
        .map((list) => ({
          Version: '2012-10-17',
          Statement: bareStatement && list.length === 1 ? list[0] : list,
        }));
    });
}

const heldAs = (actual: unknown, wanted: PolicyDocument) => policyDifference(JSON.stringify(actual), wanted);

describe('s3-identities: a policy document compared by meaning', () => {
  it('holds any reordering, split, repetition or string spelling of the grant', () => {
    fc.assert(
      fc.property(
        grants.chain((wanted) => fc.tuple(fc.constant(wanted), respelled(wanted))),
        ([wanted, actual]) => {
          expect(heldAs(actual, wanted)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds one pair more or one pair less, and names it', () => {
    const change = fc.record({ extra: fc.boolean(), which: fc.nat() });
    fc.assert(
      fc.property(grants, change, (wanted, { extra, which }) => {
        const { Action: actions, Resource: resources } = wanted.Statement[0]!;
        const pairs = actions.flatMap((a) => resources.map((r) => [a, r] as const));
        const [action, resource] = pairs[which % pairs.length]!;
        const statements = pairs.map(([a, r]) => ({ Effect: 'Allow', Action: a, Resource: r }));
        const changed = extra
          ? [...statements, { Effect: 'Allow', Action: 's3:GetBucketTagging', Resource: resource }]
          : statements.filter((s) => s.Action !== action || s.Resource !== resource);
        const detail = heldAs({ Version: '2012-10-17', Statement: changed }, wanted);
        expect(detail).toBe(
          extra
            ? `the server also allows s3:GetBucketTagging on ${resource}`
            : `the server does not allow ${action} on ${resource}`,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('finds another bucket, a widened action, and says which', () => {
    const wanted = policyDocument(s3Identities.valuesSchema.parse({ buckets: ['app-a'], actions: ['Read'] }))!;
    const doc = (Action: unknown, Resource: unknown) => ({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action, Resource }],
    });
    expect(heldAs(doc('s3:GetObject', ['arn:aws:s3:::app-a/*', 'arn:aws:s3:::app-a']), wanted)).toBeUndefined();
    expect(
      heldAs(doc('s3:GetObject', ['arn:aws:s3:::app-a', 'arn:aws:s3:::app-a/*', 'arn:aws:s3:::app-b']), wanted),
    ).toBe('the server also allows s3:GetObject on arn:aws:s3:::app-b');
    expect(heldAs(doc(['s3:Get*'], ['arn:aws:s3:::app-a', 'arn:aws:s3:::app-a/*']), wanted)).toBe(
      'the server also allows s3:Get* on arn:aws:s3:::app-a, arn:aws:s3:::app-a/*; the server does not allow s3:GetObject on arn:aws:s3:::app-a, arn:aws:s3:::app-a/*',
    );
  });

  const readA = { Effect: 'Allow', Action: 's3:GetObject', Resource: ['arn:aws:s3:::app-a', 'arn:aws:s3:::app-a/*'] };
  it.each([
    ['no Version (SeaweedFS then allows nothing)', { Statement: [readA] }, /Version is absent/],
    ['Version 2008-10-17 (likewise)', { Version: '2008-10-17', Statement: [readA] }, /Version is "2008-10-17"/],
    ['Effect "allow"', { Version: '2012-10-17', Statement: [{ ...readA, Effect: 'allow' }] }, /Effect "allow"/],
    ['Effect "Deny"', { Version: '2012-10-17', Statement: [readA, { ...readA, Effect: 'Deny' }] }, /Effect "Deny"/],
    [
      'a Condition',
      { Version: '2012-10-17', Statement: [{ ...readA, Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } } }] },
      /statement 1 carries Condition/,
    ],
    ['a NotAction', { Version: '2012-10-17', Statement: [readA, { ...readA, NotAction: 'x' }] }, /2 carries NotAction/],
    [
      'an action in another case (SeaweedFS refuses it)',
      { Version: '2012-10-17', Statement: [{ ...readA, Action: 's3:getobject' }] },
      /also allows s3:getobject/,
    ],
  ])('does not hold a document with %s', (_, document, detail) => {
    const wanted = policyDocument(s3Identities.valuesSchema.parse({ buckets: ['app-a'], actions: ['Read'] }))!;
    expect(heldAs({ Version: '2012-10-17', Statement: [readA] }, wanted)).toBeUndefined();
    expect(heldAs(document, wanted)).toMatch(detail);
  });

  it('does not hold what is not a document', () => {
    expect(policyMeaning('not json')).toEqual({ ok: false, problem: 'the document is not JSON' });
    expect(policyMeaning('[]')).toEqual({ ok: false, problem: 'the document is not a JSON object' });
    expect(policyMeaning('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Resource":"r"}]}')).toMatchObject({
      ok: false,
    });
  });
});
