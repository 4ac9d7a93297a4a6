import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { backendAddresses } from '../../../src/config/backend-overlap.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-overlap-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HEAD = `queue:
  url: redis://127.0.0.1:6379
store:
  url: mongodb://127.0.0.1:27017
providers:
`;

/** A provider entry: its name, adapter, admin URL and more lines. */
function provider(name: string, adapter: string, url: string, ...more: string[]): string {
  return [`  - name: ${name}`, `    adapter: ${adapter}`, `    admin: { url: "${url}" }`, `    contributions: ${name}.yaml`, ...more.map((l) => `    ${l}`)].join('\n');
}

/** The problems `loadConfig` finds in the file made of `providers`, one per line; [] when it loads. */
async function problems(...providers: string[]): Promise<string[]> {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, `${HEAD}${providers.join('\n')}\n`);
  try {
    await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
    return (error as HoldfastError).message.split('\n').slice(1).map((l) => l.trim());
  }
}

describe('one backend, one owner per login', () => {
  it('refuses two providers on one Redis without loginPrefix, naming both, the file and both lines', async () => {
    const path = join(dir, 'holdfast.yaml');
    expect(await problems(provider('cache', 'redis-acl', 'redis://127.0.0.1:6380'), provider('sessions', 'redis-acl', 'redis://localhost:6380/2'))).toEqual([
      `${path}:12: providers[1].admin.url: provider sessions shares its backend (loopback:6380) with provider cache (${path}:8), and not both set a loginPrefix: ` +
        'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
    ]);
  });

  it('counts localhost, 127.0.0.1 and ::1 as one host, and a default port as given', async () => {
    for (const [a, b] of [
      ['redis://127.0.0.1:6379', 'redis://[::1]'],
      ['postgres://localhost/postgres', 'postgres://127.0.0.1:5432/other'],
      ['mongodb://db1:27017,db2:27017/?replicaSet=rs0', 'mongodb://DB2/?authSource=admin'],
    ] as const) {
      const adapter = a.startsWith('redis') ? 'redis-acl' : a.startsWith('postgres') ? 'postgres-roles' : 'mongodb-users';
      expect(await problems(provider('a', adapter, a), provider('b', adapter, b)), `${a} and ${b}`).toHaveLength(1);
    }
  });

  it('refuses overlapping loginPrefix settings (one starts with the other), and one set alone', async () => {
    const [overlap] = await problems(provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: app_'), provider('b', 'redis-acl', 'redis://h:6379', 'loginPrefix: app_b_'));
    expect(overlap).toContain('their loginPrefix settings "app_" and "app_b_" overlap (one starts with the other)');
    expect(await problems(provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: a_'), provider('b', 'redis-acl', 'redis://h:6379'))).toHaveLength(1);
  });

  it('lets providers on one backend be when their prefixes keep them apart, and providers on different servers be', async () => {
    expect(await problems(provider('a', 'redis-acl', 'redis://h:6379', 'loginPrefix: a_'), provider('b', 'redis-acl', 'redis://h:6379/1', 'loginPrefix: b_'))).toEqual([]);
    expect(await problems(provider('a', 'redis-acl', 'redis://h:6379'), provider('b', 'redis-acl', 'redis://h:6380'), provider('c', 'redis-acl', 'redis://other:6379'))).toEqual([]);
  });

  it('loads the example configuration (the catalog shares the store, not another provider)', async () => {
    // as `npm run example` runs it: beside its admin secrets
    writeFileSync(join(dir, 'holdfast.yaml'), readFileSync(join(import.meta.dirname, '../../../examples/holdfast.yaml')));
    mkdirSync(join(dir, 'secrets'));
    for (const name of ['queue', 'store', 'cache', 'ledger', 'catalog', 'assets']) writeFileSync(join(dir, `secrets/${name}-admin`), 'an-admin-password\n');
    const config = await loadConfig(join(dir, 'holdfast.yaml'), { adapters: ADAPTERS, environment: { stdoutIsTTY: false }, readOnly: true });
    expect(config.providers.map((p) => p.name)).toEqual(['cache', 'ledger', 'catalog', 'assets']);
    expect(config.providers[0]!.reservedLogins).toEqual(['default', 'admin']);
  });
});

describe('backendAddresses', () => {
  it('normalises hosts and ports, every host of a seed list, a socket directory, an SRV name', () => {
    expect(backendAddresses('redis://LOCALHOST')).toEqual(['loopback:6379']);
    expect(backendAddresses('rediss://[::1]:6390/3')).toEqual(['loopback:6390']);
    expect(backendAddresses('mongodb://a:1,b/?replicaSet=x')).toEqual(['a:1', 'b:27017']);
    expect(backendAddresses('mongodb+srv://Cluster.example.')).toEqual(['srv:cluster.example']);
    expect(backendAddresses('postgres://ignored/db?host=%2Fvar%2Frun%2Fpostgresql')).toEqual(['/var/run/postgresql:5432']);
  });
});
