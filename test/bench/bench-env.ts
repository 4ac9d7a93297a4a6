/**
 * A benchmark's world: a cache Redis whose ACL users are the consumers, the queue's Redis, a
 * MongoDB wire server for the records (FerretDB with its `_id` index, where no Docker engine
 * runs), and a holdfast configuration with N consumers, their grant secrets and their
 * contributions file. Started fresh for each case, removed after it.
 */
import { DEFAULT_MAX_CONSUMERS } from '../../src/config/max-consumers.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADAPTERS } from '../../src/adapters/registry.js';
import type { HoldfastConfig } from '../../src/config/config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { createRunDir, instanceDir, reapRunDir, type RunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';

export interface BenchConsumer {
  id: string;
  key: string;
  login: string;
  password: string;
}

/** Timing keys for the configuration's `defaults:` (e.g. `{ verifyEvery: '60s' }`). */
export type TimingOverrides = Record<string, string>;

/**
 * The cache provider's `admin:` (another backend than the world's one-node cache); `passwordFile` is relative to the
 * world's directory.
 */
export interface CacheAdmin {
  url: string;
  username: string;
  passwordFile: string;
}

export const COMMANDS = ['+@read', '+@write', '+@connection'];

export class BenchEnv {
  private constructor(
    readonly run: RunDir,
    readonly dir: string,
    readonly cache: OwnedBackend,
    readonly queue: OwnedBackend,
    readonly store: OwnedBackend,
    readonly consumers: BenchConsumer[],
  ) {}

  static async create(count: number): Promise<BenchEnv> {
    const settings = readSettings();
    const run = createRunDir(settings.tmpRoot);
    try {
      const docker = await useDocker(settings);
      const [cache, queue, store] = await Promise.all([
        startOwned('redis', run, settings, docker),
        startOwned('redis', run, settings, docker),
        startOwned('mongodb', run, settings, docker),
      ]);
      const dir = instanceDir(run, 'bench');
      for (const sub of ['grants', 'secrets', 'contributions']) mkdirSync(join(dir, sub), { mode: 0o755 });
      const consumers = Array.from({ length: count }, (_, i): BenchConsumer => {
        const id = `c${String(i).padStart(6, '0')}`;
        return { id, key: `cache/${id}`, login: `hf_${id}`, password: randomBytes(18).toString('base64url') };
      });
      for (const c of consumers)
        writeFileSync(join(dir, 'grants', `${c.id}.secret`), `${c.password}\n`, { mode: 0o600 });
      const items = consumers.map(
        (c) =>
          `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: { keys: ["${c.id}:*"], commands: ${JSON.stringify(COMMANDS)} }`,
      );
      writeFileSync(join(dir, 'contributions/cache.yaml'), `consumers:\n${items.join('\n')}\n`);
      writeFileSync(join(dir, 'secrets/queue'), queue.admin.password, { mode: 0o600 });
      writeFileSync(join(dir, 'secrets/store'), store.admin.password, { mode: 0o600 });
      writeFileSync(join(dir, 'secrets/cache'), cache.admin.password, { mode: 0o600 });
      writeFileSync(join(dir, 'secrets/fingerprint.key'), randomBytes(32), { mode: 0o600 });
      return new BenchEnv(run, dir, cache, queue, store, consumers);
    } catch (error) {
      await reapRunDir(run);
      throw error;
    }
  }

  /**
   * Writes `holdfast-<name>.yaml` with these timing defaults and returns its path and loaded form.
   * `admin`: the cache provider's backend, when not the world's one-node cache. `sync`: the
   * configuration's `sync:` keys, e.g. `contributionsMaxBytes: 1GiB`.
   */
  async configure(
    name: string,
    timing: TimingOverrides,
    concurrency = 32,
    admin?: CacheAdmin,
    sync?: string,
  ): Promise<{ path: string; config: HoldfastConfig }> {
    const { queue, store, cache } = this;
    const cacheAdmin = admin ?? {
      url: `redis://${cache.host}:${cache.port}`,
      username: cache.admin.username,
      passwordFile: 'secrets/cache',
    };
    const path = join(this.dir, `holdfast-${name}.yaml`);
    writeFileSync(
      path,
      [
        `queue: { url: "redis://${queue.host}:${queue.port}", username: ${queue.admin.username}, passwordFile: secrets/queue }`,
        `store: { url: "mongodb://${store.host}:${store.port}/?authSource=admin", username: ${store.admin.username}, passwordFile: secrets/store }`,
        'fingerprintKeyFile: secrets/fingerprint.key',
        `worker: { concurrency: ${concurrency} }`,
        // a world larger than the default bound on one file's consumers says its own (config/max-consumers.ts)
        `sync: { maxConsumers: ${Math.max(this.consumers.length, DEFAULT_MAX_CONSUMERS)}${sync ? `, ${sync}` : ''} }`,
        'log: { level: warn, format: json }',
        `defaults: { ${Object.entries(timing)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} }`,
        'providers:',
        '  - name: cache',
        '    adapter: redis-acl',
        `    admin: { url: "${cacheAdmin.url}", username: ${cacheAdmin.username}, passwordFile: ${cacheAdmin.passwordFile} }`,
        '    contributions: contributions/cache.yaml',
        '    secretsRoot: grants',
        `    policy: { keyPrefix: "{id}:", allowedCommands: ${JSON.stringify(COMMANDS)} }`,
      ].join('\n') + '\n',
    );
    return { path, config: await loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } }) };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.cache.stop(), this.queue.stop(), this.store.stop()]);
    await reapRunDir(this.run);
  }
}
