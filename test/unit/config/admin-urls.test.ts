import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { CONFIG_HEAD, providerEntry } from '../../support/config-text.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-admin-urls-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const provider = providerEntry;

async function load(...providers: string[]): Promise<HoldfastConfig> {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, `${CONFIG_HEAD}${providers.join('\n')}\n`);
  return loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
}

/** The problems `loadConfig` finds, one per line, each with the file's name made `F`. */
async function problems(...providers: string[]): Promise<string[]> {
  try {
    await load(...providers);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
    return (error as HoldfastError).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim().replaceAll(join(dir, 'holdfast.yaml'), 'F'));
  }
}

const TWO = '{ urls: [postgres://a:5432/postgres, postgres://b:5432/postgres], username: postgres }';

describe('admin.urls: a primary and its standbys', () => {
  it('resolves to every host, the first as url; the one-url form is unchanged', async () => {
    const config = await load(
      provider('ledger', 'postgres-roles', TWO),
      provider('cache', 'redis-acl', '{ url: redis://h:6379 }'),
    );
    expect(config.providers[0]!.admin).toEqual({
      url: 'postgres://a:5432/postgres',
      urls: ['postgres://a:5432/postgres', 'postgres://b:5432/postgres'],
      username: 'postgres',
      password: undefined,
    });
    expect(config.providers[1]!.admin).toEqual({
      url: 'redis://h:6379',
      username: undefined,
      password: undefined,
      pace: { checkTimeoutMs: 30_000, verifyEveryMs: 60_000 },
    });
  });

  it('refuses urls on an adapter that takes one host, url beside urls, neither, an empty list, a host twice', async () => {
    expect(await problems(provider('cache', 'redis-acl', '{ urls: [redis://a:6379, redis://b:6379] }'))).toEqual([
      "F:8: providers[0].admin.urls: the redis-acl adapter finds a backend's nodes itself: give url, sentinels (with master) or cluster",
    ]);
    expect(
      await problems(
        provider('ledger', 'postgres-roles', '{ url: postgres://a/postgres, urls: [postgres://b/postgres] }'),
      ),
    ).toEqual(['F:8: providers[0].admin.urls: give url (one host) or urls (several), not both']);
    expect(await problems(provider('ledger', 'postgres-roles', '{ username: postgres }'))).toEqual([
      'F:8: providers[0].admin.url: give url (one host) or urls (a primary and its standbys)',
    ]);
    expect(await problems(provider('cache', 'redis-acl', '{ username: default }'))).toEqual([
      'F:8: providers[0].admin.url: give url (one node and its replicas), sentinels (with master) or cluster (some nodes of a Redis Cluster)',
    ]);
    expect(await problems(provider('ledger', 'postgres-roles', '{ urls: [] }'))).toEqual([
      'F:8: providers[0].admin.urls: list at least one host',
    ]);
    expect(
      await problems(
        provider('ledger', 'postgres-roles', '{ urls: [postgres://a/postgres, postgres://A:5432/other] }'),
      ),
    ).toEqual([
      'F:8: providers[0].admin.urls: postgres://A:5432/other names the same server as postgres://a/postgres, listed before it',
    ]);
  });

  it('refuses a host that carries credentials, naming its place in the list', async () => {
    expect(
      await problems(
        provider('ledger', 'postgres-roles', '{ urls: [postgres://a/postgres, "postgres://u:pw@b/postgres"] }'),
      ),
    ).toEqual(['F:8: providers[0].admin.urls[1]: the URL must not carry a password: put it in passwordFile']);
  });

  it('counts every listed host as the provider backend: a provider on a standby alone shares it', async () => {
    expect(
      await problems(
        provider('ledger', 'postgres-roles', TWO),
        provider('other', 'postgres-roles', '{ url: "postgres://b/x" }'),
      ),
    ).toEqual([
      'F:12: providers[1].admin.url: provider other shares its backend (b:5432) with provider ledger (F:8), and not both set a loginPrefix: ' +
        'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
    ]);
    expect(
      await problems(
        provider('other', 'postgres-roles', '{ url: "postgres://b/x" }'),
        provider('ledger', 'postgres-roles', TWO),
      ),
    ).toEqual([
      'F:12: providers[1].admin.urls: provider ledger shares its backend (b:5432) with provider other (F:8), and not both set a loginPrefix: ' +
        'give both a loginPrefix, neither starting with the other, so that each owns its own logins',
    ]);
    expect(
      await problems(
        provider('ledger', 'postgres-roles', TWO, 'loginPrefix: l_'),
        provider('other', 'postgres-roles', '{ url: "postgres://b/x" }', 'loginPrefix: o_'),
      ),
    ).toEqual([]);
  });
});
