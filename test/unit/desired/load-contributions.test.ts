import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { canonicalJson } from '../../../src/text/canonical-json.js';
import { sha256Hex } from '../../../src/secrets/sha256.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { providerConfig } from '../../support/provider-config.js';

/** A backend whose consumers get key patterns, and whose policy bounds them by a prefix. */
const valuesSchema = z.strictObject({ keys: z.array(z.string()).default([]) });
const policySchema = z.strictObject({ keyPrefix: z.string() });
const fakeKind: AdapterKind<z.infer<typeof valuesSchema>, z.infer<typeof policySchema>> = {
  kind: 'fake',
  valuesSchema,
  policySchema,
  violations: ({ values }, policy) =>
    values.keys
      .filter((key) => !key.startsWith(policy.keyPrefix))
      .map((key) => `values.keys: "${key}" is outside the policy's prefix "${policy.keyPrefix}"`),
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-contributions-'));
  file = join(dir, 'cache.yaml');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function provider(
  path = file,
  secretsRoot?: string,
  foreignSecretRoots: ProviderConfig['foreignSecretRoots'] = [],
): ProviderConfig {
  return providerConfig({
    adapter: fakeKind,
    contributionsPath: path,
    policy: { keyPrefix: 'app:' },
    secretsRoot,
    foreignSecretRoots,
  });
}

async function load(yaml: string, secretsRoot?: string, foreign: ProviderConfig['foreignSecretRoots'] = []) {
  writeFileSync(file, yaml);
  return loadContributions(provider(file, secretsRoot, foreign));
}

/** The problems a user sees, one per line, when the file is refused. */
async function problems(yaml: string): Promise<string[]> {
  const error: unknown = await load(yaml).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  expect((error as HoldfastError).code).toBe('CONTRIBUTIONS_INVALID');
  const [headline, ...lines] = (error as HoldfastError).message.split('\n');
  expect(headline).toContain(file);
  return lines.map((line) => line.trim());
}

describe('loadContributions', () => {
  it('turns each declared consumer into a spec', async () => {
    const state = await load(
      `consumers:
  - id: photos
    login: app_photos
    secret: grants/photos.secret
    values: { keys: ['app:photos:*'] }
  - id: search
    login: app_search
    secret: /run/grants/search
`,
      '/run/grants',
    );

    expect(state).toEqual({
      provider: 'cache',
      consumers: [
        {
          key: 'cache/photos',
          id: 'photos',
          desired: {
            login: 'app_photos',
            values: { keys: ['app:photos:*'] },
            secretPath: join(dir, 'grants/photos.secret'),
            specHash: sha256Hex(
              canonicalJson({
                login: 'app_photos',
                values: { keys: ['app:photos:*'] },
                secretPath: join(dir, 'grants/photos.secret'),
              }),
            ),
            source: `${file}:2`,
            removed: false,
            problems: [],
          },
        },
        {
          key: 'cache/search',
          id: 'search',
          desired: {
            login: 'app_search',
            values: { keys: [] },
            secretPath: '/run/grants/search',
            specHash: sha256Hex(
              canonicalJson({ login: 'app_search', values: { keys: [] }, secretPath: '/run/grants/search' }),
            ),
            source: `${file}:6`,
            removed: false,
            problems: [],
          },
        },
      ],
    });
  });

  it('rejects a consumer whose grant secret leaves the contributions directory (../, absolute, a symlink out) unless under secretsRoot', async () => {
    mkdirSync(join(dir, 'grants'));
    const outside = mkdtempSync(join(tmpdir(), 'holdfast-outside-'));
    try {
      writeFileSync(join(outside, 'real.secret'), 'a-long-password\n');
      symlinkSync(join(outside, 'real.secret'), join(dir, 'grants/link.secret'));
      const yaml = `consumers:
  - { id: a, login: app_a, secret: grants/ok.secret }
  - { id: b, login: app_b, secret: ../elsewhere/b.secret }
  - { id: c, login: app_c, secret: /etc/shadow }
  - { id: d, login: app_d, secret: grants/link.secret }
`;
      const state = await load(yaml);
      const problems = Object.fromEntries(state.consumers.map((c) => [c.id, c.desired.problems]));
      expect(problems.a).toEqual([]);
      expect(problems.b).toEqual([
        `${file}:3: consumers[1].secret: "../elsewhere/b.secret" leaves the contributions file's directory (give the provider a secretsRoot to allow another)`,
      ]);
      expect(problems.c).toEqual([
        `${file}:4: consumers[2].secret: "/etc/shadow" leaves the contributions file's directory (give the provider a secretsRoot to allow another)`,
      ]);
      expect(problems.d?.[0]).toMatch(
        new RegExp(
          `^${file}:5: consumers\\[3\\]\\.secret: "grants/link.secret" is a symlink to .*real\\.secret, outside the contributions file's directory`,
        ),
      );
      const allowed = await load(yaml, outside);
      expect(allowed.consumers.find((c) => c.id === 'd')!.desired.problems).toEqual([]);
      expect(allowed.consumers.find((c) => c.id === 'c')!.desired.problems).toHaveLength(1);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("rejects a grant secret in another provider's directory, even one that is also this provider's, and a symlink into one", async () => {
    for (const sub of ['grants', 'grants/ledger', 'ledger-grants']) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, 'ledger-grants/billing.secret'), 'a-ledger-password\n');
    symlinkSync(join(dir, 'ledger-grants/billing.secret'), join(dir, 'grants/link.secret'));
    const foreign = [
      { provider: 'ledger', field: 'contributions' as const, path: dir }, // the ledger's contributions beside the cache's
      { provider: 'ledger', field: 'secretsRoot' as const, path: join(dir, 'ledger-grants') },
    ];
    const yaml = `consumers:
  - { id: a, login: app_a, secret: grants/a.secret }
  - { id: b, login: app_b, secret: ledger-grants/billing.secret }
  - { id: c, login: app_c, secret: grants/link.secret }
`;
    const grants = join(dir, 'grants');
    // the shared directory holds no secret of either: only the cache's own secretsRoot does
    const shared = await load(yaml, grants, foreign);
    const problems = Object.fromEntries(shared.consumers.map((c) => [c.id, c.desired.problems]));
    expect(problems.a).toEqual([
      `${file}:2: consumers[0].secret: "grants/a.secret" is in ${dir}, provider ledger's contributions file's directory: no grant secret of one provider may be in another's directory`,
    ]);
    expect(problems.b?.[0]).toContain(
      `"ledger-grants/billing.secret" is in ${dir}, provider ledger's contributions file's directory`,
    );
    const apart = await load(yaml, grants, foreign.slice(1));
    const kept = Object.fromEntries(apart.consumers.map((c) => [c.id, c.desired.problems]));
    expect(kept.a).toEqual([]);
    expect(kept.b).toEqual([
      `${file}:3: consumers[1].secret: "ledger-grants/billing.secret" is in ${join(dir, 'ledger-grants')}, provider ledger's secretsRoot: no grant secret of one provider may be in another's directory`,
    ]);
    expect(kept.c).toEqual([
      `${file}:4: consumers[2].secret: "grants/link.secret" is a symlink to ${join(dir, 'ledger-grants/billing.secret')}, in ${join(dir, 'ledger-grants')}, provider ledger's secretsRoot: no grant secret of one provider may be in another's directory`,
    ]);
  });

  it('accepts `consumers: []` as declaring none', async () => {
    expect(await load('consumers: []\n')).toEqual({ provider: 'cache', consumers: [] });
  });

  it('rejects a consumer its policy refuses, alone, with file and line', async () => {
    const state = await load(`consumers:
  - id: greedy
    login: app_greedy
    secret: grants/greedy
    values: { keys: ['*'] }
  - id: fine
    login: app_fine
    secret: grants/fine
    values: { keys: ['app:fine:*'] }
`);

    const refused = state.consumers.filter((c) => c.desired.problems.length > 0);
    expect(
      refused.map(({ key, id, desired }) => ({
        key,
        id,
        login: desired.login,
        source: desired.source,
        problems: desired.problems,
      })),
    ).toEqual([
      {
        key: 'cache/greedy',
        id: 'greedy',
        login: 'app_greedy',
        source: `${file}:2`,
        problems: [`${file}:2: values.keys: "*" is outside the policy's prefix "app:"`],
      },
    ]);
    expect(state.consumers.filter((c) => c.desired.problems.length === 0).map((consumer) => consumer.key)).toEqual([
      'cache/fine',
    ]);
  });

  describe('refuses the whole file', () => {
    it('when it is empty, saying how to declare no consumers', async () => {
      expect(await problems('')).toEqual([
        `${file}:1: (top level): the file is empty; write \`consumers: []\` to declare no consumers`,
      ]);
      expect(await problems('# truncated\n')).toHaveLength(1);
    });

    it('when it is missing', async () => {
      const missing = join(dir, 'absent.yaml');
      const error: unknown = await loadContributions(provider(missing)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HoldfastError);
      expect((error as HoldfastError).code).toBe('CONTRIBUTIONS_INVALID');
      expect((error as HoldfastError).message).toContain(`${missing}: cannot read the file (ENOENT)`);
    });

    it('when it is not YAML, naming the line', async () => {
      expect(await problems('consumers:\n  - id: a\n    login: [b\n')).toEqual([
        expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: invalid YAML: `)),
      ]);
    });

    it('when two consumers share a login or an id', async () => {
      const found = await problems(`consumers:
  - id: a
    login: app_a
    secret: grants/a
  - id: a
    login: app_a
    secret: grants/b
`);
      expect(found).toEqual([
        `${file}:5: consumers[1].id: duplicate id "a" (also consumers[0])`,
        `${file}:6: consumers[1].login: duplicate login "app_a" (also consumers[0])`,
      ]);
    });

    it('listing every structural problem with its line and field', async () => {
      const found = await problems(`consumers:
  - id: ok
    login: app_ok
    secret: grants/ok
  - id: bad id
    login: app_b
    secret: grants/b
  - id: c
    secret: grants/c
    colour: blue
  - id: d
    login: app_d
    secret: grants/d
    values:
      keys: app:d
      limit: 3
extra: true
`);
      expect(found).toEqual([
        `${file}:17: extra: unknown field`,
        `${file}:5: consumers[1].id: must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit`,
        `${file}:8: consumers[2].login: required`,
        `${file}:10: consumers[2].colour: unknown field`,
        `${file}:15: consumers[3].values.keys: Invalid input: expected array, received string`,
        `${file}:16: consumers[3].values.limit: unknown field`,
      ]);
    });

    it('when consumers is not a list', async () => {
      expect(await problems('consumers:\n  photos: {}\n')).toEqual([
        `${file}:1: consumers: Invalid input: expected array, received object`,
      ]);
    });
  });

  describe('specHash', () => {
    const spec = async (values: string, secret = 'grants/a') => {
      const state = await load(
        `consumers:\n  - id: a\n    login: app_a\n    secret: ${secret}\n    values: ${values}\n`,
      );
      return state.consumers[0]?.desired.specHash;
    };
    const objectValues = z.strictObject({ keys: z.array(z.string()), options: z.record(z.string(), z.number()) });
    const withOptions = { ...fakeKind, valuesSchema: objectValues, violations: () => [] } as AdapterKind;

    it('does not change when keys are written in another order', async () => {
      const load = async (yaml: string) => {
        writeFileSync(file, yaml);
        return (await loadContributions({ ...provider(), adapter: withOptions })).consumers[0]?.desired.specHash;
      };
      const first = await load(
        "consumers:\n  - id: a\n    login: app_a\n    secret: s\n    values: { keys: ['app:x'], options: { a: 1, b: 2 } }\n",
      );
      const second = await load(
        "consumers:\n  - values: { options: { b: 2, a: 1 }, keys: ['app:x'] }\n    secret: s\n    login: app_a\n    id: a\n",
      );
      expect(first).toBeDefined();
      expect(second).toBe(first);
    });

    it('changes when the values or the secret path change', async () => {
      const base = await spec("{ keys: ['app:x'] }");
      expect(await spec("{ keys: ['app:x'] }")).toBe(base);
      expect(await spec("{ keys: ['app:y'] }")).not.toBe(base);
      expect(await spec("{ keys: ['app:x'] }", 'grants/other')).not.toBe(base);
    });
  });
});
