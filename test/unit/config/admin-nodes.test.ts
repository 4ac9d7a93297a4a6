/**
 * The admin forms of a backend of several nodes (redis-acl): url and its replicas, sentinels with
 * master, cluster; `nodes: discover | only`. Each problem is `file:line: field: reason`, and two
 * providers naming the same Sentinel master, or overlapping cluster nodes, are one backend.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { CONFIG_HEAD, providerEntry } from '../../support/config-text.js';
import type { HoldfastConfig } from '../../../src/config/config.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-admin-nodes-'));
  writeFileSync(join(dir, 'admin'), 'admin-password-1\n');
  writeFileSync(join(dir, 'sentinel'), 'sentinel-password-1\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const provider = providerEntry;

async function load(...providers: string[]): Promise<{ config?: HoldfastConfig; problems: string[] }> {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, `${CONFIG_HEAD}${providers.join('\n')}\n`);
  try {
    return {
      config: await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } }),
      problems: [],
    };
  } catch (error) {
    expect(error).toBeInstanceOf(HoldfastError);
    return {
      problems: (error as HoldfastError).message
        .split('\n')
        .slice(1)
        .map((l) => l.trim()),
    };
  }
}

describe('redis-acl admin forms', () => {
  it('resolves the Sentinel form: its sentinels, master, credentials and nodes: discover by default', async () => {
    const { config, problems } = await load(
      provider(
        'cache',
        'redis-acl',
        '{ sentinels: [redis://10.0.0.5:26379, redis://10.0.0.6:26379], master: mymaster, username: default, passwordFile: admin, sentinelPasswordFile: sentinel }',
      ),
    );
    expect(problems).toEqual([]);
    const admin = config!.providers[0]!.admin;
    expect(admin.url).toBe('redis://10.0.0.5:26379');
    expect(admin.password).toBe('admin-password-1');
    expect(admin.topology).toEqual({
      form: 'sentinel',
      sentinels: ['redis://10.0.0.5:26379', 'redis://10.0.0.6:26379'],
      master: 'mymaster',
      sentinelPassword: 'sentinel-password-1',
      nodes: 'discover',
    });
  });

  it('resolves the cluster form and nodes: only', async () => {
    const { config } = await load(
      provider('cache', 'redis-acl', '{ cluster: [redis://10.0.0.1:6379, redis://10.0.0.2:6379], nodes: only }'),
    );
    expect(config!.providers[0]!.admin.topology).toEqual({
      form: 'cluster',
      seeds: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379'],
      nodes: 'only',
    });
  });

  it('keeps the one-node form as it was', async () => {
    const { config } = await load(provider('cache', 'redis-acl', '{ url: redis://10.0.0.1:6379 }'));
    expect(config!.providers[0]!.admin).toEqual({
      url: 'redis://10.0.0.1:6379',
      username: undefined,
      password: undefined,
      pace: { verifyEveryMs: 60_000, checkTimeoutMs: 30_000 },
    });
  });

  it('names file, line and field for each problem of the form', async () => {
    const path = join(dir, 'holdfast.yaml');
    const { problems } = await load(
      provider('a', 'redis-acl', '{ url: redis://10.0.0.1:6379, cluster: [redis://10.0.0.2:6379] }'),
      provider('b', 'redis-acl', '{ sentinels: [redis://10.0.0.5:26379] }'),
      provider('c', 'redis-acl', '{ username: default }'),
      provider('d', 'postgres-roles', '{ url: postgres://db/postgres, nodes: only }'),
      provider('e', 'redis-acl', '{ cluster: [http://10.0.0.2:6379], nodes: some }'),
      provider('f', 'redis-acl', '{ url: redis://10.0.0.9:6379, master: mymaster }'),
    );
    expect(problems).toEqual([
      `${path}:8: providers[0].admin.cluster: give one of url, sentinels and cluster, not url and cluster`,
      `${path}:12: providers[1].admin.master: name the master the Sentinels monitor (e.g. mymaster)`,
      `${path}:16: providers[2].admin.url: give url (one node and its replicas), sentinels (with master) or cluster (some nodes of a Redis Cluster)`,
      `${path}:20: providers[3].admin.nodes: the postgres-roles adapter holds one node: give url alone`,
      expect.stringMatching(
        new RegExp(`^${path}:24: providers\\[4\\]\\.admin\\.cluster\\[0\\]: expected a redis:// or rediss:// URL$`),
      ),
      expect.stringMatching(new RegExp(`^${path}:24: providers\\[4\\]\\.admin\\.nodes: `)),
      `${path}:28: providers[5].admin.master: only with sentinels`,
    ]);
  });

  it('counts two providers naming one Sentinel master, or overlapping cluster nodes, as one backend', async () => {
    const sentinel = await load(
      provider('a', 'redis-acl', '{ sentinels: [redis://10.0.0.5:26379, redis://10.0.0.6:26379], master: mymaster }'),
      provider('b', 'redis-acl', '{ sentinels: [redis://10.0.0.6:26379], master: mymaster }'),
    );
    // (their key and channel prefixes are the same too: namespace-overlap.ts says so apart)
    expect(sentinel.problems.filter((p) => p.includes('admin.'))).toEqual([
      expect.stringMatching(
        /providers\[1\]\.admin\.sentinels: provider b shares its backend \(10\.0\.0\.6:26379, master mymaster\) with provider a/,
      ),
    ]);
    const otherMaster = await load(
      provider('a', 'redis-acl', '{ sentinels: [redis://10.0.0.5:26379], master: one }'),
      provider('b', 'redis-acl', '{ sentinels: [redis://10.0.0.5:26379], master: two }'),
    );
    expect(otherMaster.problems).toEqual([]);
    const cluster = await load(
      provider('a', 'redis-acl', '{ cluster: [redis://10.0.0.1:6379, redis://10.0.0.2:6379] }'),
      provider('b', 'redis-acl', '{ url: redis://10.0.0.2:6379 }'),
    );
    expect(cluster.problems.filter((p) => p.includes('admin.'))).toEqual([
      expect.stringMatching(
        /providers\[1\]\.admin\.url: provider b shares its backend \(.*10\.0\.0\.2:6379\) with provider a/,
      ),
    ]);
  });
});
