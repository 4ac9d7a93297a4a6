/**
 * Every field of an entry is bounded, by the one values schema the loader and the worker's spec
 * check share: a list over its count or bytes, a repeated item, a string too long, a pattern
 * holding a control or format character. The entry over a bound is refused alone, naming file,
 * line, field and the limit; the file's other entries are declared as usual.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { postgresRoles } from '../../../src/adapters/postgres-roles/index.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { REDIS_ACL_BOUNDS } from '../../../src/adapters/redis-acl/values.js';
import { s3Identities } from '../../../src/adapters/s3-identities/index.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { checkSpec, describeSpecProblem, type SpecSubject } from '../../../src/policy/spec-check.js';
import { providerConfig } from '../../support/provider-config.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-bounds-'));
  file = join(dir, 'cache.yaml');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function redisProvider(): ProviderConfig {
  return providerConfig({ adapter: redisAcl, contributionsPath: file, policy: redisAcl.policySchema.parse({}) });
}

/** One entry of a contributions file, its values as flow YAML. */
const entry = (id: string, values: unknown) =>
  `  - id: ${id}\n    login: app_${id}\n    secret: grants/${id}\n    values: ${JSON.stringify(values)}\n`;

/** What the worker says of `subject` on `provider`: the same check, on a spec that never went through the loader. */
function workerSays(provider: ProviderConfig, values: unknown): string[] {
  const subject: SpecSubject = { id: 'big', login: 'app_big', values, secretPath: join(dir, 'grants/big') };
  return checkSpec(provider, subject).problems.map((p) => describeSpecProblem(p, subject));
}

const patterns = (n: number, prefix = 'big:') => Array.from({ length: n }, (_, i) => `${prefix}${i}:*`);

describe('a redis-acl entry', () => {
  it('with 25,000 key patterns is refused alone, naming file, line, field and the limit; the next entry is declared', async () => {
    writeFileSync(
      file,
      `consumers:\n${entry('big', { keys: patterns(25_000) })}${entry('fine', { keys: ['fine:*'] })}`,
    );
    const state = await loadContributions(redisProvider());
    const [big, fine] = state.consumers;
    expect(big!.desired.problems).toEqual([
      `${file}:5: consumers[0].values.keys: 25,000 key patterns, more than the 256 allowed (at most 256 key patterns, 16 KiB (16,384 bytes) in all)`,
    ]);
    // refused values are not carried on to the queue or the store
    expect(big!.desired.values).toEqual({});
    expect(fine!.desired.problems).toEqual([]);
    expect(fine!.desired.values).toEqual({
      keys: ['fine:*'],
      channels: [],
      commands: ['+@read', '+@write', '+@connection', '-@dangerous'],
    });
  });

  it('is held to the same bounds by the worker, whatever reached the queue (300,000 patterns: no stack overflow)', () => {
    expect(workerSays(redisProvider(), { keys: patterns(300_000) })).toEqual([
      'values.keys: 300,000 key patterns, more than the 256 allowed (at most 256 key patterns, 16 KiB (16,384 bytes) in all)',
    ]);
    expect(workerSays(redisProvider(), { keys: patterns(REDIS_ACL_BOUNDS.keys.maxItems) })).toEqual([]);
  });

  it('over its bytes, with a repeated pattern, or a pattern too long, says which and the limit', () => {
    const long = `big:${'x'.repeat(500)}:*`; // 506 bytes
    expect(
      workerSays(redisProvider(), { channels: Array.from({ length: 40 }, (_, i) => `big:${i}:${'y'.repeat(450)}`) }),
    ).toEqual([
      'values.channels: 17.8 KiB (18,270 bytes) of channel patterns, more than the 16 KiB (16,384 bytes) allowed (at most 256 channel patterns, 16 KiB (16,384 bytes) in all)',
    ]);
    expect(workerSays(redisProvider(), { keys: ['big:a', 'big:b', 'big:a', 'big:b', 'big:a'] })).toEqual([
      'values.keys[2]: repeats item [0]; each of the key patterns may be listed once (and 2 more repeats)',
    ]);
    expect(workerSays(redisProvider(), { keys: [`${long}${'z'.repeat(10)}`] })).toEqual([
      'values.keys[0]: is 516 bytes long, more than the 512 allowed',
    ]);
    expect(workerSays(redisProvider(), { commands: Array.from({ length: 65 }, (_, i) => `-cmd${i}`) })[0]).toContain(
      '65 command rules, more than the 64 allowed',
    );
  });

  it('refuses control and Unicode format characters in a pattern (U+202E)', () => {
    expect(workerSays(redisProvider(), { keys: ['big:\u202e*'] })).toEqual([
      'values.keys[0]: a pattern may not contain Unicode format characters (such as U+202E)',
    ]);
    expect(workerSays(redisProvider(), { channels: ['big:\u009b2J'] })).toEqual([
      'values.channels[0]: a pattern may not contain whitespace or control characters',
    ]);
  });
});

describe('a postgres-roles entry', () => {
  it('with 100,000 repeated databases is refused alone, in one problem', async () => {
    const provider = providerConfig({
      adapter: postgresRoles,
      contributionsPath: file,
      policy: postgresRoles.policySchema.parse({ allowedDatabases: ['postgres'] }),
    });
    writeFileSync(
      file,
      `consumers:\n${entry('big', { databases: Array.from({ length: 100_000 }, () => 'postgres') })}${entry('fine', { databases: ['postgres'] })}`,
    );
    const [big, fine] = (await loadContributions(provider)).consumers;
    expect(big!.desired.problems).toEqual([
      `${file}:5: consumers[0].values.databases: 100,000 databases, more than the 64 allowed (at most 64 databases, 4 KiB (4,096 bytes) in all)`,
    ]);
    expect(fine!.desired.problems).toEqual([]);
    // under the count, a repeat is still refused, naming its index
    expect(workerSays(provider, { databases: ['postgres', 'postgres'] })).toEqual([
      'values.databases[1]: repeats item [0]; each of the databases may be listed once',
    ]);
    expect(workerSays(provider, { schemas: ['a\u202eb'] })).toEqual([
      'values.schemas[0]: may not contain control characters or Unicode format characters (such as U+202E)',
    ]);
  });
});

describe('mongodb-users and s3-identities entries', () => {
  it('are bounded too', () => {
    const mongo = providerConfig({
      adapter: mongodbUsers,
      contributionsPath: file,
      policy: mongodbUsers.policySchema.parse({ allowedRoles: ['read'] }),
    });
    expect(workerSays(mongo, { database: 'app', roles: Array.from({ length: 65 }, (_, i) => `r${i}`) })[0]).toContain(
      '65 roles, more than the 64 allowed',
    );
    expect(workerSays(mongo, { database: 'app', roles: ['read', 'read'] })).toEqual([
      'values.roles[1]: repeats item [0]; each of the roles may be listed once',
    ]);
    const s3 = providerConfig({
      adapter: s3Identities,
      contributionsPath: file,
      policy: s3Identities.policySchema.parse({}),
    });
    expect(workerSays(s3, { buckets: Array.from({ length: 65 }, (_, i) => `big-${i}`) })[0]).toContain(
      '65 bucket patterns, more than the 64 allowed',
    );
    expect(workerSays(s3, { buckets: ['big-a'], actions: ['Read', 'Read'] })).toEqual([
      'values.actions[1]: repeats item [0]; each of the actions may be listed once',
    ]);
  });
});

describe('the grant secret', () => {
  it('is refused past 1,024 bytes, its value cut short in the problem', async () => {
    writeFileSync(file, `consumers:\n  - id: big\n    login: app_big\n    secret: ${'s'.repeat(5000)}\n`);
    const [big] = (await loadContributions(redisProvider())).consumers;
    expect(big!.desired.problems).toHaveLength(1);
    expect(big!.desired.problems[0]).toMatch(
      new RegExp(
        `^${file}:4: consumers\\[0\\]\\.secret: "s{128}"… is 5,\\d{3} bytes long resolved, more than the 1,024 allowed$`,
      ),
    );
  });
});
