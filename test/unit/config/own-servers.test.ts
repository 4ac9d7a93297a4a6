/**
 * holdfast's own servers are never a tenant's: a provider on the queue's Redis or the record
 * store's server is refused at load naming both, unless it says `sharesHoldfastServer: true`;
 * then holdfast's names there are withheld from its consumers (`src/policy/own-names.ts`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { providerEntry } from '../../support/config-text.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-own-servers-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The queue on 127.0.0.1:6379 (prefix `hf`), the store on 127.0.0.1:27017 (database `records`). */
const HEAD = `queue:
  url: redis://127.0.0.1:6379/2
  prefix: hf
store:
  url: mongodb://127.0.0.1:27017/?authSource=admin
  database: records
providers:
`;

/** A config of `providers` loaded: the config, or its problems one per line. */
async function load(head: string, ...providers: string[]): Promise<HoldfastConfig | string[]> {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, `${head}${providers.join('\n')}\n`);
  try {
    return await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false }, readOnly: true });
  } catch (error) {
    expect(error).toBeInstanceOf(HoldfastError);
    expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
    return (error as HoldfastError).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
  }
}

/** The problems said, one per line, or `loaded`. */
const refusal = (loaded: HoldfastConfig | string[]) => (Array.isArray(loaded) ? loaded.join('\n') : 'loaded');

const redis = (admin: string, ...more: string[]) => providerEntry('cache', 'redis-acl', admin, ...more);
const mongo = (url: string, ...more: string[]) =>
  providerEntry('catalog', 'mongodb-users', `{ url: "${url}" }`, ...more);

describe("holdfast's own servers", () => {
  it("refuses a redis-acl provider on the queue's Redis, naming both, the file and both lines", async () => {
    const path = join(dir, 'holdfast.yaml');
    expect(await load(HEAD, redis('{ url: "redis://127.0.0.1:6379" }'))).toEqual([
      `${path}:10: providers[0].admin: provider cache is on the queue's Redis (loopback:6379, queue.url at ${path}:2): ` +
        "a tenant of it could read and forge holdfast's keys; give it a server of its own, or say sharesHoldfastServer: true " +
        'to share it with holdfast, whose names are then withheld from its consumers',
    ]);
  });

  it('knows the server however it is spelled: localhost, ::1, the default port, a resolved name, this machine, a Cluster node', async () => {
    for (const admin of [
      '{ url: "redis://localhost:6379" }',
      '{ url: "redis://[::1]" }',
      '{ url: "redis://LOCALHOST.:6379/5" }',
      '{ url: "redis://[::ffff:127.0.0.1]:6379" }',
      '{ url: "redis://0.0.0.0:6379" }',
      '{ url: "redis://127.0.0.7:6379", nodes: only }',
      '{ cluster: ["redis://10.9.9.9:7000", "redis://localhost:6379"] }',
    ]) {
      const said = await load(HEAD, redis(admin));
      expect(Array.isArray(said) ? said.join('\n') : 'loaded', admin).toContain(
        "provider cache is on the queue's Redis (loopback:6379",
      );
    }
  });

  it("knows a host name that resolves to the queue's address (this machine's name)", async (context) => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (resolved === undefined) return context.skip(`${name} does not resolve here`);
    expect(refusal(await load(HEAD, redis(`{ url: "redis://${name}:6379" }`)))).toContain(
      "provider cache is on the queue's Redis (loopback:6379",
    );
  });

  it("refuses a queue on a Cluster whose node a provider lists, and a provider on the store's server", async () => {
    const cluster = HEAD.replace(
      'url: redis://127.0.0.1:6379/2\n  prefix: hf',
      'cluster: [redis://10.1.1.1:7000, redis://10.1.1.2:7000]\n  prefix: "{hf}"',
    );
    expect(refusal(await load(cluster, redis('{ url: "redis://10.1.1.2:7000" }')))).toContain(
      "provider cache is on the queue's Redis (10.1.1.2:7000, queue.cluster at",
    );
    expect(refusal(await load(HEAD, mongo('mongodb://localhost/?authSource=admin')))).toContain(
      "provider catalog is on the record store's server (loopback:27017, store.url at",
    );
    expect(refusal(await load(HEAD, mongo('mongodb://localhost/?authSource=admin')))).toContain(
      "a tenant of it could read holdfast's records",
    );
  });

  it('loads a provider on another server, or on a Sentinel (whose master it cannot know), without a word', async () => {
    for (const provider of [
      redis('{ url: "redis://127.0.0.1:6380" }'),
      redis('{ url: "redis://10.0.0.1:6379" }'),
      redis('{ sentinels: ["redis://127.0.0.1:26379"], master: mymaster }'),
      mongo('mongodb://127.0.0.1:27018'),
    ]) {
      const config = await load(HEAD, provider);
      expect(Array.isArray(config) ? config : 'loaded', provider).toBe('loaded');
      expect((config as HoldfastConfig).providers[0]!.ownNames).toBeUndefined();
    }
  });

  it("with sharesHoldfastServer: true, loads it with holdfast's names to withhold and the deny list grown", async () => {
    const config = (await load(
      HEAD,
      redis('{ url: "redis://localhost:6379" }', 'sharesHoldfastServer: true'),
    )) as HoldfastConfig;
    const [cache] = config.providers;
    expect(cache!.ownNames).toEqual({
      server: `the queue's Redis (${join(dir, 'holdfast.yaml')}:2)`,
      keys: ['hf*'],
      channels: ['hf*', '__keyspace@*__:hf*', '__keyevent@*'],
      databases: [],
    });
    expect((cache!.policy as { deniedCommands: string[] }).deniedCommands).toEqual([
      '-@dangerous',
      '-@admin',
      '-function',
      '-pubsub',
      '-client|tracking',
      '-scan',
      '-randomkey',
      '-dbsize',
      '-cluster|getkeysinslot',
      '-cluster|countkeysinslot',
    ]);
    const sharded = (await load(
      HEAD.replace('prefix: hf', 'prefix: "a*{hf}"\n  shards: 4'),
      redis('{ url: "redis://localhost:6379" }', 'sharesHoldfastServer: true'),
    )) as HoldfastConfig;
    expect(sharded.providers[0]!.ownNames!.keys).toEqual(['a\\*{hf}*', 'a\\*{hf-*}*']);
    const catalog = (await load(
      HEAD,
      mongo('mongodb://127.0.0.1:27017', 'sharesHoldfastServer: true'),
    )) as HoldfastConfig;
    expect(catalog.providers[0]!.ownNames).toMatchObject({ keys: [], databases: ['records'] });
    // said where no address shows it: both servers' names withheld
    const elsewhere = (await load(
      HEAD,
      redis('{ url: "redis://10.0.0.1:6379" }', 'sharesHoldfastServer: true'),
    )) as HoldfastConfig;
    expect(elsewhere.providers[0]!.ownNames).toMatchObject({ keys: ['hf*'], databases: ['records'] });
  });
});
