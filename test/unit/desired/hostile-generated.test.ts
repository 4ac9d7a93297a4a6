/**
 * Generated hostile input (fast-check): contributions files and specs as anyone could write them.
 * For every adapter, generated ids, logins, values and YAML shapes
 *
 * - never throw anything but a `HoldfastError` (`CONTRIBUTIONS_INVALID`) whose every problem
 *   names the file, a line and a field;
 * - never give a rule outside the provider's policy: an entry the loader accepts is accepted by
 *   the worker's spec check too, and what the rule builder makes of it stays inside the policy
 *   (Redis: every key and channel pattern starts with the expanded prefix, no raw ACL token);
 * - and each item is judged within a generous time bound, measured inside the property.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { ADMIN_ONLY_ROLES, type MongodbUsersPolicy } from '../../../src/adapters/mongodb-users/policy.js';
import { MONGODB_USERS_BOUNDS, type MongodbUsersValues } from '../../../src/adapters/mongodb-users/values.js';
import { postgresRoles } from '../../../src/adapters/postgres-roles/index.js';
import type { PostgresRolesPolicy } from '../../../src/adapters/postgres-roles/policy.js';
import { POSTGRES_ROLES_BOUNDS, type PostgresRolesValues } from '../../../src/adapters/postgres-roles/values.js';
import { effectiveCommands, userRules } from '../../../src/adapters/redis-acl/acl-rules.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { markSelector } from '../../../src/adapters/redis-acl/acl-mark.js';
import type { RedisAclPolicy } from '../../../src/adapters/redis-acl/policy.js';
import { COMMAND_RULE, REDIS_ACL_BOUNDS, type RedisAclValues } from '../../../src/adapters/redis-acl/values.js';
import { policyDocument } from '../../../src/adapters/s3-identities/identity.js';
import { s3Identities } from '../../../src/adapters/s3-identities/index.js';
import type { S3IdentitiesPolicy } from '../../../src/adapters/s3-identities/policy.js';
import { S3_IDENTITIES_BOUNDS, type S3IdentitiesValues } from '../../../src/adapters/s3-identities/values.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { checkSpec } from '../../../src/policy/spec-check.js';
import { providerConfig } from '../../support/provider-config.js';

/**
 * Generous: a file of a few generated entries is read in milliseconds; a loaded 2-core machine may be 100 times slower.
 */
const ITEM_BOUND_MS = 2_000;
const RUNS = { files: 200, specs: 400 };

const dir = mkdtempSync(join(tmpdir(), 'holdfast-generated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Words a hostile writer tries: raw ACL tokens, wildcards, templates, controls, format characters, other tenants'
 * names.
 */
const TRICKS = [
  '',
  '*',
  '~*',
  '&*',
  '%R~*',
  'allkeys',
  'allchannels',
  'allcommands',
  'nopass',
  'resetpass',
  '>pw',
  '<pw',
  '#abc',
  '!abc',
  'reset',
  'resetkeys',
  'on',
  'off',
  '+@all',
  '-@all',
  '+@admin',
  '+acl',
  '+config|set',
  '-@dangerous',
  '+@read',
  '-flushall',
  'Admin',
  'Read',
  'postgres',
  'pg_read_all_data',
  'pg_execute_server_program',
  'root',
  'readWrite',
  'admin',
  '{id}',
  '{login}',
  '..',
  '../x',
  '/etc/passwd',
  'x y',
  '\u202e',
  '\u001b[2J',
  '\u009b2J',
  '\u0000',
  '\u200d',
  'a'.repeat(600),
  'b'.repeat(70),
];
const trick = fc.constantFrom(...TRICKS);
const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,12}$/);
/** Controls and format characters a terminal or a reader would act on, hidden inside a plausible name. */
const sneaky = fc
  .tuple(
    name,
    fc.constantFrom(
      '\u202e',
      '\u200d',
      '\u2066',
      '\ufeff',
      '\u00ad',
      '\u{e0001}',
      '\u001b[2J',
      '\u009b',
      '\u0000',
      '\n',
      ' ',
      '\u2028',
    ),
    name,
  )
  .map((parts) => parts.join(''));
const anyText = fc.oneof(
  { weight: 2, arbitrary: trick },
  { weight: 2, arbitrary: sneaky },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 24 }) },
);
const lower = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,10}$/);
/** Mostly what a tenant would write, sometimes what an attacker would. */
const often = <T, U>(usual: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 9, arbitrary: usual }, { weight: 1, arbitrary: hostile });
const idLike = often(name, anyText);

/** A pattern under `<id><separator>` (the policy's prefix), or not. */
const under = (id: string, separator: string) =>
  often(
    fc.oneof(name, fc.constantFrom('*', '?', '[a]*')).map((rest) => `${id}${separator}${rest}`),
    fc.oneof(
      anyText,
      anyText.map((rest) => `${id}${separator}${rest}`),
    ),
  );
const list = <T>(item: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.array(item, { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(item, { maxLength: 300 }) },
  );

/**
 * Values for each kind: its own fields, mostly plausible, with hostile text mixed in; sometimes an extra field,
 * sometimes anything at all.
 */
const VALUES: Record<string, (id: string) => fc.Arbitrary<unknown>> = {
  'redis-acl': (id) =>
    fc
      .record(
        {
          keys: list(under(id, ':')),
          channels: list(under(id, ':')),
          commands: list(
            often(
              fc.constantFrom('+@read', '+@write', '+get', '+config|get', '-@dangerous', '-flushall', '-@all'),
              fc.oneof(trick, anyText),
            ),
          ),
          allkeys: often(fc.constant(undefined), anyText),
        },
        { requiredKeys: [] },
      )
      .map(({ allkeys, ...values }) => (allkeys === undefined ? values : { ...values, allkeys })),
  'postgres-roles': () =>
    fc.record(
      {
        databases: list(often(fc.constantFrom('postgres', 'app'), fc.oneof(trick, anyText))),
        schemas: list(often(fc.constant('public'), anyText)),
        roles: list(often(fc.constant('readers'), fc.oneof(trick, name))),
      },
      { requiredKeys: [] },
    ),
  'mongodb-users': (id) =>
    fc.record(
      {
        database: often(fc.constant(id), fc.oneof(trick, anyText)),
        roles: list(often(fc.constantFrom('read', 'readWrite'), fc.oneof(trick, name))),
      },
      { requiredKeys: ['database'] },
    ),
  's3-identities': (id) =>
    fc.record(
      {
        buckets: list(
          often(
            fc.oneof(
              lower.map((n) => `${id}-${n}`),
              fc.constant(`${id}-*`),
            ),
            fc.oneof(trick, anyText, lower),
          ),
        ),
        actions: often(
          fc.uniqueArray(fc.constantFrom('Read', 'Write', 'List', 'Tagging'), { minLength: 1 }),
          list(fc.oneof(trick, fc.constantFrom('Read', 'Admin'))),
        ),
      },
      { requiredKeys: [] },
    ),
};

function valuesFor(kind: string, id: string): fc.Arbitrary<unknown> {
  return often(VALUES[kind]!(id), fc.anything({ maxDepth: 2 }));
}

/** One entry: id, login, secret and values, each maybe hostile, maybe missing, maybe with a hostile extra field. */
function entry(kind: string): fc.Arbitrary<Record<string, unknown>> {
  // ids of s3 and mongodb consumers are bucket and database name parts: lowercase there, mostly
  return (kind === 's3-identities' || kind === 'mongodb-users' ? often(lower, anyText) : idLike).chain((id) =>
    fc
      .record(
        {
          id: often(fc.constant(id), fc.anything({ maxDepth: 1 })),
          login: often(
            name.map((n) => `app_${n}`),
            idLike,
          ),
          secret: often(
            name.map((n) => `grants/${n}`),
            anyText,
          ),
          values: valuesFor(kind, id),
          extra: often(fc.constant(null), fc.tuple(anyText, anyText)),
        },
        { requiredKeys: ['id', 'login', 'secret', 'extra'] },
      )
      .map(({ extra, ...item }) => (extra ? { ...item, [extra[0]]: extra[1] } : item)),
  );
}

/**
 * A whole file: the plain block shape the mesh writes, a flow shape, a document with extra keys, or any text at all.
 */
function fileText(kind: string): fc.Arbitrary<string> {
  const entries = fc.array(entry(kind), { maxLength: 4 });
  return fc.oneof(
    { weight: 4, arbitrary: entries.map((consumers) => stringify({ consumers })) },
    { weight: 2, arbitrary: entries.map((consumers) => JSON.stringify({ consumers })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(entries, fc.dictionary(anyText, fc.anything({ maxDepth: 1 }), { maxKeys: 2 }))
        .map(([consumers, more]) => stringify({ ...more, consumers })),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    {
      weight: 1,
      arbitrary: fc.tuple(entries, fc.nat(400)).map(([consumers, cut]) => stringify({ consumers }).slice(0, cut)),
    },
  );
}

interface Kind {
  adapter: AdapterKind<never, never>;
  policy: unknown;
  /** Throws (an expect) when `values`, accepted for consumer `id`/`login`, would give more than the policy. */
  inPolicy(values: unknown, id: string, login: string, policy: unknown): void;
}

const noRepeats = (items: readonly string[]) => expect(new Set(items).size).toBe(items.length);

const KINDS: Record<string, Kind> = {
  'redis-acl': {
    adapter: redisAcl as unknown as AdapterKind<never, never>,
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read', '+@write', '+get', '+config|get'] }),
    inPolicy(raw, id, login, given) {
      const values = raw as RedisAclValues;
      const policy = given as RedisAclPolicy;
      const keyPrefix = policy.keyPrefix.replaceAll('{id}', id).replaceAll('{login}', login);
      const channelPrefix = policy.channelPrefix.replaceAll('{id}', id).replaceAll('{login}', login);
      expect(values.keys.length).toBeLessThanOrEqual(REDIS_ACL_BOUNDS.keys.maxItems);
      noRepeats(values.keys);
      const rules = userRules({
        passwordHash: 'f'.repeat(64),
        keys: values.keys,
        channels: values.channels,
        commands: effectiveCommands(values.commands, policy.deniedCommands),
        owner: 'cache',
      });
      expect(rules.slice(0, 4)).toEqual(['reset', 'resetchannels', 'on', `#${'f'.repeat(64)}`]);
      expect(rules.at(-1)).toBe(markSelector('cache'));
      const allowed = new Set(policy.allowedCommands);
      for (const rule of rules.slice(4, -1)) {
        expect(rule).not.toMatch(/[\s\p{Cc}\p{Cf}]/u);
        if (rule.startsWith('~')) expect(rule.slice(1).startsWith(keyPrefix), rule).toBe(true);
        else if (rule.startsWith('&')) expect(rule.slice(1).startsWith(channelPrefix), rule).toBe(true);
        else {
          // nothing else but command rules: no allkeys, nopass, >pw, #hash, reset, on/off…
          expect(rule, rule).toMatch(COMMAND_RULE);
          if (rule.startsWith('+')) expect(allowed.has(rule) || allowed.has(rule.split('|')[0]!), rule).toBe(true);
        }
      }
      // the deny list comes last, so it wins
      expect(rules.slice(-1 - policy.deniedCommands.length, -1)).toEqual(policy.deniedCommands);
    },
  },
  'postgres-roles': {
    adapter: postgresRoles as unknown as AdapterKind<never, never>,
    policy: postgresRoles.policySchema.parse({
      allowedDatabases: ['postgres', 'app'],
      allowedSchemas: ['public'],
      allowedRoles: ['readers'],
    }),
    inPolicy(raw, _id, login, given) {
      const values = raw as PostgresRolesValues;
      const policy = given as PostgresRolesPolicy;
      for (const [field, allowed] of [
        ['databases', policy.allowedDatabases],
        ['schemas', policy.allowedSchemas],
        ['roles', policy.allowedRoles],
      ] as const) {
        expect(values[field].length).toBeLessThanOrEqual(POSTGRES_ROLES_BOUNDS[field].maxItems);
        noRepeats(values[field]);
        for (const name of values[field]) expect(allowed).toContain(name);
      }
      expect(values.roles).not.toContain(login);
    },
  },
  'mongodb-users': {
    adapter: mongodbUsers as unknown as AdapterKind<never, never>,
    policy: mongodbUsers.policySchema.parse({ allowedRoles: ['read', 'readWrite'] }),
    inPolicy(raw, id, login, given) {
      const values = raw as MongodbUsersValues;
      const policy = given as MongodbUsersPolicy;
      expect(policy.allowedDatabases.map((d) => d.replaceAll('{id}', id).replaceAll('{login}', login))).toContain(
        values.database,
      );
      expect(['admin', 'local', 'config']).not.toContain(values.database.toLowerCase());
      expect(values.roles.length).toBeLessThanOrEqual(MONGODB_USERS_BOUNDS.roles.maxItems);
      noRepeats(values.roles);
      for (const role of values.roles) {
        expect(policy.allowedRoles).toContain(role);
        expect(ADMIN_ONLY_ROLES).not.toContain(role);
      }
    },
  },
  's3-identities': {
    adapter: s3Identities as unknown as AdapterKind<never, never>,
    policy: s3Identities.policySchema.parse({}),
    inPolicy(raw, id, login, given) {
      const values = raw as S3IdentitiesValues;
      const policy = given as S3IdentitiesPolicy;
      const prefix = policy.bucketPrefix.replaceAll('{id}', id).replaceAll('{login}', login);
      expect(values.buckets.length).toBeLessThanOrEqual(S3_IDENTITIES_BOUNDS.buckets.maxItems);
      noRepeats(values.buckets);
      const document = policyDocument(values);
      for (const resource of document?.Statement.flatMap((s) => s.Resource) ?? []) {
        const bucket = resource.replace(/^arn:aws:s3:::/, '').replace(/\/\*$/, '');
        expect(bucket.startsWith(prefix) && bucket.length > prefix.length, resource).toBe(true);
      }
      for (const action of document?.Statement.flatMap((s) => s.Action) ?? []) expect(action).not.toBe('s3:*');
    },
  },
};

function provider(kind: string, file: string): ProviderConfig {
  const { adapter, policy } = KINDS[kind]!;
  return providerConfig({ adapter, contributionsPath: file, policy });
}

/**
 * Every line of a refusal names the file, a line and a field: `<file>:<line>: <field>: <reason>` (or the count of the
 * rest).
 */
function expectNamed(message: string, file: string): void {
  const [headline, ...lines] = message.split('\n');
  expect(headline).toMatch(new RegExp(`^invalid contributions ${file} \\(`));
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines.map((l) => l.trim())) {
    if (line.startsWith('… and ')) continue;
    expect(line.startsWith(`${file}:`), line).toBe(true);
    expect(line.slice(file.length), line).toMatch(/^:\d+: \S/);
  }
}

describe.each(Object.keys(KINDS))('generated contributions for %s', (kind) => {
  /** Entries accepted and so checked against the policy: a property that never gets there proves nothing. */
  const accepted = { files: 0, specs: 0 };
  afterAll(() => {
    // a property that never reaches an accepted entry checks no rule against the policy
    expect(accepted.files).toBeGreaterThan(0);
    expect(accepted.specs).toBeGreaterThan(0);
  });
  it('are read or refused by a HoldfastError naming file, line and field; what is accepted stays inside the policy', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fileText(kind), async (text) => {
        const file = join(dir, `${kind}-${run++}.yaml`);
        writeFileSync(file, text);
        const config = provider(kind, file);
        const started = performance.now();
        const outcome = await loadContributions(config).then(
          (state) => ({ state }),
          (error: unknown) => ({ error }),
        );
        expect(performance.now() - started).toBeLessThan(ITEM_BOUND_MS);
        if ('error' in outcome) {
          expect(isHoldfastError(outcome.error, 'CONTRIBUTIONS_INVALID'), String(outcome.error)).toBe(true);
          expectNamed((outcome.error as Error).message, file);
          return;
        }
        for (const consumer of outcome.state.consumers) {
          const { desired } = consumer;
          for (const problem of desired.problems) expect(problem.startsWith(`${file}:`), problem).toBe(true);
          if (desired.problems.length > 0) continue;
          // what the loader accepts, the worker accepts too, and the rules it gives stay inside the policy
          accepted.files++;
          const again = checkSpec(config, {
            id: consumer.id,
            login: desired.login,
            values: desired.values,
            secretPath: desired.secretPath,
          });
          expect(again.problems).toEqual([]);
          KINDS[kind]!.inPolicy(again.values, consumer.id, desired.login, config.policy);
        }
      }),
      { numRuns: RUNS.files },
    );
  }, 120_000);

  it("the worker's spec check never throws, and what it accepts stays inside the policy", () => {
    const config = provider(kind, join(dir, 'none.yaml'));
    fc.assert(
      fc.property(
        idLike.chain((id) =>
          fc.tuple(
            fc.constant(id),
            fc.oneof(
              name.map((n) => `app_${n}`),
              idLike,
            ),
            valuesFor(kind, id),
          ),
        ),
        ([id, login, values]) => {
          const started = performance.now();
          const checked = checkSpec(config, { id, login, values, secretPath: join(dir, 'grants/x') });
          expect(performance.now() - started).toBeLessThan(ITEM_BOUND_MS);
          for (const problem of checked.problems)
            expect(['id', 'login', 'secret', 'values', 'policy']).toContain(problem.field);
          if (checked.problems.length === 0) accepted.specs++;
          if (checked.problems.length === 0) KINDS[kind]!.inPolicy(checked.values, id, login, config.policy);
        },
      ),
      { numRuns: RUNS.specs },
    );
  });
});
