import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import type { Environment } from '../../../src/config/environment.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';

const policySchema = z.strictObject({ keyPrefix: z.string().default('') });
const fakeKind: AdapterKind<unknown, z.infer<typeof policySchema>> = {
  kind: 'fake',
  valuesSchema: z.unknown(),
  policySchema,
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};
const adapters: ReadonlyMap<string, AdapterKind> = new Map([['fake', fakeKind]]);
const noTerminal: Environment = { stdoutIsTTY: false };

const SECRETS = 'queue-secret-content';

/** The smallest valid configuration; cases below break it one way at a time. */
const MINIMAL = `queue:
  url: redis://127.0.0.1:6379
store:
  url: mongodb://127.0.0.1:27017
providers:
  - name: cache
    adapter: fake
    admin:
      url: redis://127.0.0.1:6380
    contributions: contributions/cache.yaml
`;

let dir: string;
let configPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-config-'));
  configPath = join(dir, 'holdfast.yaml');
  write('secrets/queue-redis', `${SECRETS}\n`);
  write('secrets/mongodb-admin', 'mongo-pw\r\n');
  write('secrets/cache-admin', 'cache-pw');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(relative: string, content: string | Buffer): string {
  const path = join(dir, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

/** 1-based line of the first line of `yaml` that contains `marker`. */
function lineOf(yaml: string, marker: string): number {
  const index = yaml.split('\n').findIndex((line) => line.includes(marker));
  if (index < 0) throw new Error(`marker ${marker} not in the YAML`);
  return index + 1;
}

async function load(yaml: string, environment: Environment = noTerminal) {
  writeFileSync(configPath, yaml);
  return loadConfig(configPath, { adapters, environment });
}

/** The problems a user sees, one per line, when `yaml` is refused. */
async function problems(yaml: string, environment: Environment = noTerminal): Promise<string[]> {
  const error: unknown = await load(yaml, environment).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
  const [headline, ...lines] = (error as HoldfastError).message.split('\n');
  expect(headline).toContain(configPath);
  return lines.map((line) => line.trim());
}

describe('loadConfig, valid files', () => {
  it('resolves a full configuration: URLs parsed, paths absolute, passwords read, defaults and overrides applied', async () => {
    const yaml = `queue:
  url: rediss://queue.example:6390/3
  username: queue-user
  passwordFile: secrets/queue-redis
  prefix: '{holdfast}'
  name: jobs
store:
  url: mongodb://db1:27017,db2:27017/?replicaSet=rs0&authSource=admin
  username: admin
  passwordFile: secrets/mongodb-admin
  database: records
worker: { concurrency: 8 }
sync: { pollEvery: 2s, sentinelEvery: 1m, sweepEvery: 10m, contributionsMaxBytes: 32MiB, maxConsumers: 5000 }
log: { level: debug, format: pretty }
defaults:
  verifyEvery: 2m
  checkTimeout: 20s
  brakeMax: 2h
  retryBase: 500ms
  jitter: 0.2
  secretGrace: 90s
  deepCheckEvery: 3h
providers:
  - name: cache
    adapter: fake
    admin:
      url: redis://127.0.0.1:6380
      username: default
      passwordFile: secrets/cache-admin
    contributions: contributions/cache.yaml
    policy: { keyPrefix: 'app:' }
    verifyEvery: 10s
    checkTimeout: 5s
  - name: other
    adapter: fake
    admin: { url: 'redis://[::1]:6381' }
    contributions: /etc/holdfast/other.yaml
    maxConsumers: 200
`;
    const { fingerprintKey, ...config } = await load(yaml);

    expect(fingerprintKey).toHaveLength(32);
    expect(config).toEqual({
      source: configPath,
      queue: {
        connection: { host: 'queue.example', port: 6390, db: 3, tls: true, username: 'queue-user', password: SECRETS },
        prefix: '{holdfast}',
        name: 'jobs',
        shards: 1,
      },
      store: {
        url: 'mongodb://db1:27017,db2:27017/?replicaSet=rs0&authSource=admin',
        username: 'admin',
        password: 'mongo-pw',
        database: 'records',
        connectTimeoutMs: 5_000,
      },
      worker: { concurrency: 8 },
      sync: {
        pollEveryMs: 2_000,
        sentinelEveryMs: 60_000,
        sweepEveryMs: 600_000,
        contributionsMaxBytes: 32 * 1024 * 1024,
      },
      log: { level: 'debug', format: 'pretty' },
      http: { listen: undefined, auth: undefined, readOnly: true, hosts: [] },
      providers: [
        {
          name: 'cache',
          adapter: fakeKind,
          admin: { url: 'redis://127.0.0.1:6380', username: 'default', password: 'cache-pw' },
          contributionsPath: join(dir, 'contributions/cache.yaml'),
          contributionsMaxBytes: 32 * 1024 * 1024,
          maxConsumers: { max: 5000, setting: 'sync.maxConsumers' },
          policy: { keyPrefix: 'app:' },
          timing: {
            verifyEveryMs: 10_000,
            checkTimeoutMs: 5_000,
            brakeMaxMs: 7_200_000,
            retryBaseMs: 500,
            jitter: 0.2,
            secretGraceMs: 90_000,
            deepCheckEveryMs: 10_800_000,
            deepCheckBudget: 0.01,
            contestedWindowMs: 3_600_000,
          },
          management: 'manage',
          removalGuard: { share: 0.25, floor: 2 },
          adopt: false,
          // no consumer may be the provider's admin, the queue's or the store's user, or `default`
          reservedLogins: ['default', 'queue-user', 'admin'],
          reservedReasons: new Map([
            ['default', 'is the admin login of provider cache'],
            ['queue-user', "is the login of holdfast's queue (queue.username)"],
            ['admin', "is the login of holdfast's record store (store.username)"],
          ]),
          secretsRoot: undefined,
          foreignSecretRoots: [{ provider: 'other', field: 'contributions', path: '/etc/holdfast' }],
        },
        {
          name: 'other',
          adapter: fakeKind,
          admin: { url: 'redis://[::1]:6381', username: undefined, password: undefined },
          contributionsPath: '/etc/holdfast/other.yaml',
          contributionsMaxBytes: 32 * 1024 * 1024,
          maxConsumers: { max: 200, setting: 'providers[1].maxConsumers' },
          policy: { keyPrefix: '' },
          timing: {
            verifyEveryMs: 120_000,
            checkTimeoutMs: 20_000,
            brakeMaxMs: 7_200_000,
            retryBaseMs: 500,
            jitter: 0.2,
            secretGraceMs: 90_000,
            deepCheckEveryMs: 10_800_000,
            deepCheckBudget: 0.01,
            contestedWindowMs: 3_600_000,
          },
          management: 'manage',
          removalGuard: { share: 0.25, floor: 2 },
          adopt: false,
          reservedLogins: ['queue-user', 'admin', 'default'],
          reservedReasons: new Map([
            ['queue-user', "is the login of holdfast's queue (queue.username)"],
            ['admin', "is the login of holdfast's record store (store.username)"],
            ['default', "is the backends' built-in user (Redis's default), reserved on every provider"],
          ]),
          secretsRoot: undefined,
          foreignSecretRoots: [{ provider: 'cache', field: 'contributions', path: join(dir, 'contributions') }],
        },
      ],
    });
  });

  it('reads the HTTP server settings: host:port, and basic auth from a password file', async () => {
    write('secrets/dashboard', 'board-pw\n');
    const config = await load(`${MINIMAL}http: { listen: "0.0.0.0:9100", passwordFile: secrets/dashboard }\n`);
    expect(config.http).toEqual({
      listen: { host: '0.0.0.0', port: 9100 },
      auth: { username: 'holdfast', password: 'board-pw' },
      readOnly: true,
      hosts: [],
    });
    expect((await load(`${MINIMAL}http: { listen: "[::1]:80" }\n`)).http.listen).toEqual({ host: '::1', port: 80 });
    expect((await load(`${MINIMAL}http: { listen: "9100" }\n`)).http.listen).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(await problems(`${MINIMAL}http: { listen: "somewhere" }\n`)).toEqual([
      `${configPath}:11: http.listen: expected host:port, e.g. 127.0.0.1:9100; got "somewhere"`,
    ]);
  });

  it('refuses an option under its former name, naming the one to write', async () => {
    expect(await problems(`${MINIMAL}sync: { resyncEvery: 2s }\n`)).toEqual([
      `${configPath}:11: sync.resyncEvery: renamed: write sentinelEvery (the same value)`,
    ]);
    expect((await load(`${MINIMAL}sync: { sentinelEvery: 2s }\n`)).sync.sentinelEveryMs).toBe(2000);
  });

  it('creates no fingerprint key when read only (status creates nothing)', async () => {
    writeFileSync(configPath, MINIMAL);
    const config = await loadConfig(configPath, { adapters, environment: noTerminal, readOnly: true });
    expect(config.fingerprintKey).toHaveLength(0);
    expect(() => statSync(join(dir, '.holdfast'))).toThrow();
  });

  it('applies every default to a minimal file', async () => {
    const config = await load(MINIMAL);

    expect(config.queue).toEqual({
      connection: { host: '127.0.0.1', port: 6379, db: 0, tls: false, username: undefined, password: undefined },
      prefix: 'holdfast',
      name: 'consumers',
      shards: 1,
    });
    expect(config.store).toEqual({
      url: 'mongodb://127.0.0.1:27017',
      username: undefined,
      password: undefined,
      database: 'holdfast',
      connectTimeoutMs: 5_000,
    });
    expect(config.http).toEqual({ listen: undefined, auth: undefined, readOnly: true, hosts: [] });
    expect(config.worker).toEqual({ concurrency: 32 });
    expect(config.sync).toEqual({
      pollEveryMs: 5_000,
      sentinelEveryMs: 5_000,
      sweepEveryMs: 1_800_000,
      contributionsMaxBytes: 64 * 1024 * 1024,
    });
    expect(config.log).toEqual({ level: 'info', format: 'json' });
    expect(config.providers[0]?.policy).toEqual({ keyPrefix: '' });
    expect(config.providers[0]?.timing).toEqual({
      verifyEveryMs: 60_000,
      checkTimeoutMs: 30_000,
      brakeMaxMs: 3_600_000,
      retryBaseMs: 1_000,
      jitter: 0.1,
      secretGraceMs: 60_000,
      deepCheckEveryMs: 3_600_000,
      deepCheckBudget: 0.01,
      contestedWindowMs: 3_600_000,
    });
  });

  it('logs pretty on a terminal, and lets the environment override the file', async () => {
    expect((await load(MINIMAL, { stdoutIsTTY: true })).log).toEqual({ level: 'info', format: 'pretty' });
    const withLog = `${MINIMAL}log: { level: warn, format: pretty }\n`;
    expect((await load(withLog, { stdoutIsTTY: true, logLevel: 'trace', logFormat: 'json' })).log).toEqual({
      level: 'trace',
      format: 'json',
    });
  });

  it('creates the fingerprint key beside the config when missing (0600 in a 0700 directory), and reuses it', async () => {
    const first = await load(MINIMAL);
    const keyPath = join(dir, '.holdfast/fingerprint.key');

    expect(first.fingerprintKey).toHaveLength(32);
    expect(readFileSync(keyPath)).toEqual(first.fingerprintKey);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(keyPath)).mode & 0o777).toBe(0o700);

    const second = await load(MINIMAL);
    expect(second.fingerprintKey).toEqual(first.fingerprintKey);
  });

  it('reads a configured fingerprint key file', async () => {
    const key = Buffer.alloc(32, 7);
    write('secrets/fingerprint.key', key);
    const config = await load(`${MINIMAL}fingerprintKeyFile: secrets/fingerprint.key\n`);
    expect(config.fingerprintKey).toEqual(key);
  });
});

describe('loadConfig, provider keys for bad input', () => {
  it('resolves management, the removal guard, secretsRoot, rotationOverlap and orphans', async () => {
    const config = await load(
      `${MINIMAL}    management: no-delete\n    removalGuard: { share: 0.5, floor: 10 }\n    secretsRoot: grants\n    rotationOverlap: 10m\n    orphans: { prefix: app_ }\n`,
    );
    expect(config.providers[0]).toMatchObject({
      management: 'no-delete',
      removalGuard: { share: 0.5, floor: 10 },
      secretsRoot: join(dir, 'grants'),
      rotationOverlapMs: 600_000,
      orphans: { prefix: 'app_', everyMs: 300_000, remove: false },
    });
  });
});

describe('loadConfig, rotationOverlapMax', () => {
  it('defaults to an hour, or rotationOverlap when longer, and keeps its own value', async () => {
    const { overlapMaxMs } = await import('../../../src/config/rotation-overlap.js');
    const plain = await load(`${MINIMAL}    rotationOverlap: 10m\n`);
    expect(plain.providers[0]?.rotationOverlapMaxMs).toBeUndefined();
    expect(overlapMaxMs(plain.providers[0]!)).toBe(3_600_000);
    const long = await load(`${MINIMAL}    rotationOverlap: 2h\n`);
    expect(overlapMaxMs(long.providers[0]!)).toBe(7_200_000);
    const given = await load(`${MINIMAL}    rotationOverlap: 10m\n    rotationOverlapMax: 30m\n`);
    expect(overlapMaxMs(given.providers[0]!)).toBe(1_800_000);
  });

  it('is refused below rotationOverlap, naming both', async () => {
    const lines = await problems(`${MINIMAL}    rotationOverlap: 10m\n    rotationOverlapMax: 5m\n`);
    expect(lines).toEqual([
      expect.stringMatching(
        /providers\[0\]\.rotationOverlapMax: rotationOverlapMax \(5m\) must be at least rotationOverlap \(10m\)$/,
      ),
    ]);
  });
});

describe("loadConfig, each provider's grant secrets apart", () => {
  const second = (lines: string) =>
    `  - name: ledger\n    adapter: fake\n    admin: { url: "redis://127.0.0.1:6390" }\n${lines}`;
  const cacheRoot = (root: string) => `${MINIMAL}    secretsRoot: ${root}\n`;
  const own = (path: string) => join(dir, path);

  it("refuses a secretsRoot that is, lies inside or contains another provider's root, naming both providers and the field", async () => {
    const shared = `${cacheRoot('grants')}${second('    contributions: contributions/ledger.yaml\n    secretsRoot: grants\n')}`;
    expect(await problems(shared)).toEqual([
      `${configPath}:${shared.split('\n').lastIndexOf('    secretsRoot: grants') + 1}: providers[1].secretsRoot: provider ledger's secretsRoot ${own('grants')} is also provider cache's secretsRoot (${own('grants')}): one provider's consumers could name the other's grant secrets; give each provider a directory of its own`,
    ]);
    const nested = `${cacheRoot('grants')}${second('    contributions: contributions/ledger.yaml\n    secretsRoot: grants/ledger\n')}`;
    expect(await problems(nested)).toEqual([
      expect.stringContaining(
        `providers[1].secretsRoot: provider ledger's secretsRoot ${own('grants/ledger')} lies inside provider cache's secretsRoot (${own('grants')})`,
      ),
    ]);
    const around = `${cacheRoot('.')}${second('    contributions: ledger/ledger.yaml\n')}`;
    expect(await problems(around)).toEqual([
      expect.stringContaining(
        `${configPath}:${lineOf(around, 'secretsRoot: .')}: providers[0].secretsRoot: provider cache's secretsRoot ${dir} contains provider ledger's contributions file's directory (${own('ledger')})`,
      ),
    ]);
    const intoContributions = `${cacheRoot('contributions/grants')}${second('    contributions: contributions/ledger.yaml\n')}`;
    expect(await problems(intoContributions)).toEqual([
      expect.stringContaining(
        `provider cache's secretsRoot ${own('contributions/grants')} lies inside provider ledger's contributions file's directory (${own('contributions')})`,
      ),
    ]);
  });

  it('refuses two secretsRoots that are one directory through a symlink', async () => {
    mkdirSync(own('grants'));
    symlinkSync(own('grants'), own('alias'));
    const aliased = `${cacheRoot('grants')}${second('    contributions: contributions/ledger.yaml\n    secretsRoot: alias\n')}`;
    expect(await problems(aliased)).toEqual([
      expect.stringContaining(
        `providers[1].secretsRoot: provider ledger's secretsRoot ${own('alias')} is also provider cache's secretsRoot (${own('grants')})`,
      ),
    ]);
  });

  it("gives each provider the others' roots: a shared contributions directory is allowed, and holds neither's secrets", async () => {
    const apart = `${cacheRoot('grants/cache')}${second('    contributions: contributions/ledger.yaml\n    secretsRoot: grants/ledger\n')}`;
    const config = await load(apart);
    expect(config.providers.map((p) => p.foreignSecretRoots)).toEqual([
      [
        { provider: 'ledger', field: 'contributions', path: own('contributions') },
        { provider: 'ledger', field: 'secretsRoot', path: own('grants/ledger') },
      ],
      [
        { provider: 'cache', field: 'contributions', path: own('contributions') },
        { provider: 'cache', field: 'secretsRoot', path: own('grants/cache') },
      ],
    ]);
  });
});

describe('loadConfig, refused files name file, line and field', () => {
  const refused = (yaml: string, marker: string, field: string, reason: string | RegExp) => async () => {
    const found = await problems(yaml);
    const prefix = `${configPath}:${lineOf(yaml, marker)}: ${field}: `;
    expect(found).toContainEqual(
      typeof reason === 'string'
        ? `${prefix}${reason}`
        : expect.stringMatching(new RegExp(`^${escape(prefix)}${reason.source}`)),
    );
  };

  it(
    'a maxConsumers below 1',
    refused(`${MINIMAL}sync: { maxConsumers: 0 }\n`, 'maxConsumers', 'sync.maxConsumers', 'must be at least 1'),
  );

  it('a file nested deeper than the bound on a YAML document, by line and bound, before it is parsed', async () => {
    const yaml = `${MINIMAL}http: { hosts: ${'['.repeat(100_000)}${']'.repeat(100_000)} }\n`;
    expect(await problems(yaml)).toEqual([
      `${configPath}:${lineOf(yaml, 'hosts')}: nested more than 64 levels deep (the bound on a YAML document); refused before it is parsed`,
    ]);
  });

  it(
    'queue shards below 1',
    refused(
      MINIMAL.replace('url: redis://127.0.0.1:6379\n', 'url: redis://127.0.0.1:6379\n  shards: 0\n'),
      'shards',
      'queue.shards',
      'must be at least 1',
    ),
  );

  it(
    'queue shards with a prefix no hash tag can be derived from',
    refused(
      MINIMAL.replace(
        'url: redis://127.0.0.1:6379\n',
        'url: redis://127.0.0.1:6379\n  prefix: "hold}fast"\n  shards: 3\n',
      ),
      'prefix',
      'queue.prefix',
      /has a brace but no hash tag/,
    ),
  );

  it(
    'a removal guard share above 1',
    refused(
      `${MINIMAL}    removalGuard: { share: 2 }\n`,
      'removalGuard',
      'providers[0].removalGuard.share',
      'must be at most 1',
    ),
  );

  it(
    'a management that does not exist',
    refused(
      `${MINIMAL}    management: delete-all\n`,
      'management',
      'providers[0].management',
      /Invalid option: expected one of "manage"\|"observe"\|"no-delete"/,
    ),
  );

  it(
    'a mistyped key',
    refused(
      MINIMAL.replace('url: redis://127.0.0.1:6379\n', 'url: redis://127.0.0.1:6379\n  pasword: x\n'),
      'pasword',
      'queue.pasword',
      'unknown field',
    ),
  );

  it(
    'a duration without a unit',
    refused(
      `${MINIMAL}    verifyEvery: 60\n`,
      'verifyEvery',
      'providers[0].verifyEvery',
      /expected a duration .* a bare number like 60 has no unit/,
    ),
  );

  it(
    'a duration with an unknown unit',
    refused(
      `${MINIMAL}defaults:\n  secretGrace: 2w\n`,
      'secretGrace',
      'defaults.secretGrace',
      /expected a duration such as 500ms/,
    ),
  );

  it('a URL carrying a password, never repeating it', async () => {
    const yaml = MINIMAL.replace('url: redis://127.0.0.1:6380', 'url: redis://admin:hunter2@127.0.0.1:6380');
    const found = await problems(yaml);
    expect(found).toEqual([
      `${configPath}:${lineOf(yaml, 'hunter2')}: providers[0].admin.url: the URL must not carry a password: put it in passwordFile`,
    ]);
    expect(found.join('\n')).not.toContain('hunter2');
  });

  it(
    'an adapter holdfast does not have, listing the known ones',
    refused(
      MINIMAL.replace('adapter: fake', 'adapter: redis-acll'),
      'adapter:',
      'providers[0].adapter',
      'unknown adapter "redis-acll"; known adapters: fake',
    ),
  );

  it(
    'a missing password file, with its path and errno code',
    refused(
      MINIMAL.replace('url: redis://127.0.0.1:6380', 'url: redis://127.0.0.1:6380\n      passwordFile: secrets/nope'),
      'passwordFile',
      'providers[0].admin.passwordFile',
      /cannot read \/.*\/secrets\/nope \(ENOENT\)$/,
    ),
  );

  it('a password file that is a directory', async () => {
    mkdirSync(join(dir, 'secrets/a-directory'));
    const yaml = MINIMAL.replace(
      'url: redis://127.0.0.1:6379',
      'url: redis://127.0.0.1:6379\n  passwordFile: secrets/a-directory',
    );
    expect(await problems(yaml)).toEqual([
      `${configPath}:${lineOf(yaml, 'passwordFile')}: queue.passwordFile: cannot read ${join(dir, 'secrets/a-directory')} (EISDIR)`,
    ]);
  });

  it('an empty password file', async () => {
    write('secrets/empty', '\n');
    const yaml = MINIMAL.replace(
      'url: mongodb://127.0.0.1:27017',
      'url: mongodb://127.0.0.1:27017\n  passwordFile: secrets/empty',
    );
    expect(await problems(yaml)).toEqual([
      `${configPath}:${lineOf(yaml, 'passwordFile')}: store.passwordFile: ${join(dir, 'secrets/empty')} is empty`,
    ]);
  });

  it(
    'a missing field, on the line of its parent',
    refused(
      MINIMAL.replace('  url: mongodb://127.0.0.1:27017\n', '  database: x\n'),
      'store:',
      'store.url',
      'required',
    ),
  );

  it(
    'a policy the adapter refuses, pointing into it',
    refused(
      `${MINIMAL}    policy:\n      keyPrefx: 'app:'\n`,
      'keyPrefx',
      'providers[0].policy.keyPrefx',
      'unknown field',
    ),
  );

  it(
    'two providers with one name',
    refused(
      `${MINIMAL}  - name: cache # again\n    adapter: fake\n    admin: { url: 'redis://h:1' }\n    contributions: c.yaml\n`,
      'again',
      'providers[1].name',
      'duplicate name "cache" (also providers[0])',
    ),
  );

  it(
    'a provider name the pattern refuses',
    refused(MINIMAL.replace('name: cache', 'name: "-cache"'), 'name:', 'providers[0].name', /must be 1 to 128 letters/),
  );

  it(
    'a brake shorter than the verify interval',
    refused(
      `${MINIMAL}    brakeMax: 30s\n`,
      'brakeMax',
      'providers[0].brakeMax',
      'brakeMax (30s) must be at least verifyEvery (1m)',
    ),
  );

  it(
    'a check timeout longer than the verify interval, given in defaults',
    refused(
      `${MINIMAL}defaults: { checkTimeout: 2m }\n`,
      'defaults:',
      'defaults.checkTimeout',
      'checkTimeout (2m) must be at most verifyEvery (1m)',
    ),
  );

  it(
    'jitter outside [0, 1)',
    refused(`${MINIMAL}defaults: { jitter: 1 }\n`, 'defaults:', 'defaults.jitter', 'must be less than 1'),
  );

  it(
    'no providers',
    refused(
      MINIMAL.slice(0, MINIMAL.indexOf('  - name')).replace('providers:', 'providers: []'),
      'providers:',
      'providers',
      'at least one provider is required',
    ),
  );

  it('a YAML syntax error, with its line', async () => {
    const yaml = `${MINIMAL}worker: { concurrency: 4\n`;
    expect(await problems(yaml)).toEqual([
      expect.stringMatching(new RegExp(`^${escape(configPath)}:\\d+: invalid YAML: `)),
    ]);
  });

  it('an empty file', async () => {
    expect(await problems('# nothing yet\n')).toEqual([`${configPath}:1: (top level): the file is empty`]);
  });

  it('a missing file', async () => {
    const error: unknown = await loadConfig(join(dir, 'absent.yaml'), { adapters, environment: noTerminal }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
    expect((error as HoldfastError).message).toContain(`${join(dir, 'absent.yaml')}: cannot read the file (ENOENT)`);
  });

  it('a log level in the environment that does not exist', async () => {
    expect(await problems(MINIMAL, { stdoutIsTTY: false, logLevel: 'loud' })).toEqual([
      'HOLDFAST_LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal; got "loud"',
    ]);
  });

  it('every problem at once, in one error, never showing a secret', async () => {
    const yaml = MINIMAL.replace(
      'url: redis://127.0.0.1:6379',
      'url: redis://127.0.0.1:6379\n  passwordFile: secrets/queue-redis\n  prefx: x',
    )
      .replace('adapter: fake', 'adapter: nope')
      .replace(
        'contributions: contributions/cache.yaml',
        'contributions: contributions/cache.yaml\n    retryBase: soon',
      );
    const found = await problems(yaml);
    expect(found).toHaveLength(3);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`:${lineOf(yaml, 'prefx')}: queue.prefx: unknown field`),
        expect.stringContaining(`:${lineOf(yaml, 'adapter:')}: providers[0].adapter: unknown adapter "nope"`),
        expect.stringContaining(`:${lineOf(yaml, 'retryBase')}: providers[0].retryBase: expected a duration`),
      ]),
    );
    expect(found.join('\n')).not.toContain(SECRETS);
  });

  it('a fingerprint key file too short to be a key', async () => {
    write('short.key', 'abc');
    const yaml = `${MINIMAL}fingerprintKeyFile: short.key\n`;
    expect(await problems(yaml)).toEqual([
      `${configPath}:${lineOf(yaml, 'fingerprintKeyFile')}: fingerprintKeyFile: ${join(dir, 'short.key')} holds 3 bytes; a fingerprint key needs at least 32 (delete it to have one created)`,
    ]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
