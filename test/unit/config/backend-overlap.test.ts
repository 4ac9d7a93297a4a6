import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { backendAddresses, sharedBackends } from '../../../src/config/backend-overlap.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { CONFIG_HEAD, providerEntry } from '../../support/config-text.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-overlap-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A provider entry: its name, adapter, admin URL and more lines. */
function provider(name: string, adapter: string, url: string, ...more: string[]): string {
  return providerEntry(name, adapter, `{ url: "${url}" }`, ...more);
}

/** The problems `loadConfig` finds in the file made of `providers`, one per line; [] when it loads. */
async function problems(...providers: string[]): Promise<string[]> {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, `${CONFIG_HEAD}${providers.join('\n')}\n`);
  try {
    await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
    return (error as HoldfastError).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
  }
}

/** A Redis provider's policy line whose keys and channels start with its name: apart from any other's. */
const apart = (name: string) => `policy: { keyPrefix: "${name}:{id}:", channelPrefix: "${name}:{id}:" }`;

describe('one backend, one owner per login', () => {
  it('refuses two providers on one Redis without loginPrefix, naming both, the file and both lines', async () => {
    const path = join(dir, 'holdfast.yaml');
    expect(
      await problems(
        provider('cache', 'redis-acl', 'redis://127.0.0.1:6380', apart('cache')),
        provider('sessions', 'redis-acl', 'redis://localhost:6380/2', apart('s')),
      ),
    ).toEqual([
      `${path}:13: providers[1].admin.url: provider sessions shares its backend (loopback:6380) with provider cache (${path}:8), and not both set a loginPrefix: ` +
        'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
    ]);
  });

  it('counts localhost, 127.0.0.1 and ::1 as one host, and a default port as given', async () => {
    for (const [a, b] of [
      ['redis://127.0.0.1:6379', 'redis://[::1]'],
      ['postgres://localhost/postgres', 'postgres://127.0.0.1:5432/other'],
      ['mongodb://db1:27017,db2:27017/?replicaSet=rs0', 'mongodb://DB2/?authSource=admin'],
    ] as const) {
      const adapter = a.startsWith('redis')
        ? 'redis-acl'
        : a.startsWith('postgres')
          ? 'postgres-roles'
          : 'mongodb-users';
      // the first pair is on the queue's Redis (CONFIG_HEAD's), said so (own-servers.ts)
      const policy = (name: string) => (adapter === 'redis-acl' ? [apart(name), 'sharesHoldfastServer: true'] : []);
      expect(
        await problems(provider('a', adapter, a, ...policy('a')), provider('b', adapter, b, ...policy('b'))),
        `${a} and ${b}`,
      ).toHaveLength(1);
    }
  });

  it('refuses overlapping loginPrefix settings (one starts with the other), and one set alone', async () => {
    const [overlap] = await problems(
      provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: app_', apart('a')),
      provider('b', 'redis-acl', 'redis://h:6379', 'loginPrefix: app_b_', apart('b')),
    );
    expect(overlap).toContain('their loginPrefix settings "app_" and "app_b_" overlap (one starts with the other)');
    expect(
      await problems(
        provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: a_', apart('a')),
        provider('b', 'redis-acl', 'redis://h:6379', apart('b')),
      ),
    ).toHaveLength(1);
  });

  it('lets providers on one backend be when their prefixes keep them apart, and providers on different servers be', async () => {
    expect(
      await problems(
        provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: a_', apart('a')),
        provider('b', 'redis-acl', 'redis://h:6379/1', 'loginPrefix: b_', apart('b')),
      ),
    ).toEqual([]);
    expect(
      await problems(
        provider('a', 'redis-acl', 'redis://h:6379'),
        provider('b', 'redis-acl', 'redis://h:6380'),
        provider('c', 'redis-acl', 'redis://other:6379'),
      ),
    ).toEqual([]);
  });

  it('loads the example configuration (the catalog shares the store, not another provider)', async () => {
    // as `npm run example` runs it: beside its admin secrets
    writeFileSync(
      join(dir, 'holdfast.yaml'),
      readFileSync(join(import.meta.dirname, '../../../examples/holdfast.yaml')),
    );
    mkdirSync(join(dir, 'secrets'));
    for (const name of ['queue', 'store', 'cache', 'ledger', 'catalog', 'assets'])
      writeFileSync(join(dir, `secrets/${name}-admin`), 'an-admin-password\n');
    const config = await loadConfig(join(dir, 'holdfast.yaml'), {
      adapters: ADAPTERS,
      environment: { stdoutIsTTY: false },
      readOnly: true,
    });
    expect(config.providers.map((p) => p.name)).toEqual(['cache', 'ledger', 'catalog', 'assets']);
    expect(config.providers[0]!.reservedLogins).toEqual(['default', 'admin']);
  });
});

describe('one backend, one owner per name', () => {
  const login = (prefix: string) => `loginPrefix: ${prefix}`;

  it('refuses two Redis providers on one server with the default prefixes, naming both providers, their lines and each field', async () => {
    const path = join(dir, 'holdfast.yaml');
    expect(
      await problems(
        provider('cache', 'redis-acl', 'redis://127.0.0.1:6380', login('c_')),
        provider('sessions', 'redis-acl', 'redis://localhost:6380/2', login('s_')),
      ),
    ).toEqual(
      ['keys', 'channels'].map(
        (noun) =>
          `${path}:11: providers[1].policy.${noun === 'keys' ? 'keyPrefix' : 'channelPrefix'}: the ${noun} of provider sessions (${noun === 'keys' ? 'keyPrefix' : 'channelPrefix'} "{id}:") ` +
          `and of provider cache (${noun === 'keys' ? 'keyPrefix' : 'channelPrefix'} "{id}:", ${path}:6) can be the same: both providers are on one backend (loopback:6380), ` +
          `so a consumer id declared on both would share its ${noun}; give each provider a ${noun === 'keys' ? 'keyPrefix' : 'channelPrefix'} whose text before {id} is its own, neither the start of the other's, ` +
          `e.g. "sessions:{id}:" and "cache:{id}:"`,
      ),
    );
  });

  it("refuses a lead that starts the other's, and a provider that gives every key, at that field", async () => {
    const [keys, ...rest] = await problems(
      provider(
        'a',
        'redis-acl',
        'redis://h:6379',
        login('a_'),
        'policy: { keyPrefix: "x:{id}:", channelPrefix: "a/{id}:" }',
      ),
      provider(
        'b',
        'redis-acl',
        'redis://h:6379',
        login('b_'),
        'policy: { keyPrefix: "x:y:{id}:", channelPrefix: "b/{id}:" }',
      ),
    );
    expect(rest).toEqual([]);
    expect(keys).toMatch(
      /providers\[1\]\.policy\.keyPrefix: the keys of provider b \(keyPrefix "x:y:\{id\}:"\) and of provider a \(keyPrefix "x:\{id\}:"/,
    );
    const [all, ...none] = await problems(
      provider(
        'a',
        'redis-acl',
        'redis://h:6379',
        login('a_'),
        'policy: { allowAllKeys: true, channelPrefix: "a/{id}:" }',
      ),
      provider(
        'b',
        'redis-acl',
        'redis://h:6379',
        login('b_'),
        'policy: { keyPrefix: "b/{id}:", channelPrefix: "b/{id}:" }',
      ),
    );
    expect(none).toEqual([]);
    expect(all).toMatch(
      /providers\[0\]\.policy\.allowAllKeys: the keys of provider a \(allowAllKeys: true\) and of provider b \(keyPrefix "b\/\{id\}:", .*\) can be the same.*a keyPrefix \(not allowAllKeys\)/,
    );
  });

  it('refuses two s3-identities providers on one server with the default bucketPrefix', async () => {
    const found = await problems(
      provider('assets', 's3-identities', 'http://127.0.0.1:8333', login('a_')),
      provider('media', 's3-identities', 'http://localhost:8333', login('m_')),
    );
    expect(found).toEqual([
      expect.stringMatching(
        /providers\[1\]\.policy\.bucketPrefix: the buckets of provider media \(bucketPrefix "\{id\}-"\) and of provider assets .* e\.g\. "media-\{id\}-" and "assets-\{id\}-"$/,
      ),
    ]);
    expect(
      await problems(
        provider(
          'assets',
          's3-identities',
          'http://127.0.0.1:8333',
          login('a_'),
          'policy: { bucketPrefix: "assets-{id}-" }',
        ),
        provider(
          'media',
          's3-identities',
          'http://localhost:8333',
          login('m_'),
          'policy: { bucketPrefix: "media-{id}-" }',
        ),
      ),
    ).toEqual([]);
  });

  it('lets providers on different servers keep the default prefixes', async () => {
    expect(
      await problems(provider('a', 'redis-acl', 'redis://h:6379'), provider('b', 'redis-acl', 'redis://h:6380')),
    ).toEqual([]);
  });
});

describe('backendAddresses', () => {
  it('normalises hosts and ports, every host of a seed list, a socket directory, an SRV name', () => {
    expect(backendAddresses('redis://LOCALHOST')).toEqual(['loopback:6379']);
    expect(backendAddresses('rediss://[::1]:6390/3')).toEqual(['loopback:6390']);
    expect(backendAddresses('mongodb://a:1,b/?replicaSet=x')).toEqual(['a:1', 'b:27017']);
    expect(backendAddresses('mongodb+srv://Cluster.example.')).toEqual(['srv:cluster.example']);
    expect(backendAddresses('postgres://ignored/db?host=%2Fvar%2Frun%2Fpostgresql')).toEqual([
      '/var/run/postgresql:5432',
    ]);
  });
});

describe('sharedBackends (the login and the namespace checks both ask it)', () => {
  it('counts every host of admin.urls: a provider on any listed host, a standby alone included, shares the backend', () => {
    const pair = { admin: { urls: ['postgres://10.0.0.1:5432/postgres', 'postgres://10.0.0.2:5432/postgres'] } };
    expect(sharedBackends([pair, { admin: { url: 'postgres://10.0.0.2/app' } }])).toEqual([
      { i: 0, j: 1, shared: '10.0.0.2:5432' },
    ]);
    expect(sharedBackends([{ admin: { url: 'postgres://10.0.0.1:5432/postgres' } }, pair])).toEqual([
      { i: 0, j: 1, shared: 'postgres://10.0.0.1:5432/postgres' },
    ]);
    expect(sharedBackends([pair, { admin: { url: 'postgres://10.0.0.3:5432/postgres' } }])).toEqual([]);
  });
});
