/**
 * holdfast's own names withheld from the consumers of a provider on its own server: at load (the
 * one spec check) and in the worker (`guardSpec`, on whatever spec reached the queue).
 */
import { describe, expect, it } from 'vitest';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { OwnNames, ProviderConfig } from '../../../src/config/config.js';
import { checkSpec, describeSpecProblem, type SpecSubject } from '../../../src/policy/spec-check.js';
import { guardSpec } from '../../../workers/spec-guard.js';
import type { ProviderRuntime } from '../../../workers/provider-runtime.js';
import { providerConfig } from '../../support/provider-config.js';

const QUEUE_NAMES: OwnNames = {
  server: "the queue's Redis (/etc/holdfast.yaml:2)",
  keys: ['holdfast*', '{holdfast-*}*'],
  channels: ['holdfast*', '__keyspace@*__:holdfast*', '__keyevent@*'],
  databases: [],
};

/** A redis-acl provider that gives every key and channel: only holdfast's own names stand in the way. */
function cache(more: Partial<ProviderConfig> = {}): ProviderConfig {
  return providerConfig({
    adapter: redisAcl,
    contributionsPath: '/srv/contributions/cache.yaml',
    policy: redisAcl.policySchema.parse({ allowAllKeys: true, allowAllChannels: true }),
    ownNames: QUEUE_NAMES,
    ...more,
  });
}

const subject = (values: unknown): SpecSubject => ({ id: 'holdfast', login: 'app_holdfast', values });
const said = (config: ProviderConfig, s: SpecSubject) =>
  checkSpec(config, s).problems.map((p) => describeSpecProblem(p, s));

describe("holdfast's own names", () => {
  it('refuses a key pattern that can name a holdfast key: equal, wider or a class that covers it', () => {
    for (const pattern of ['holdfast:*', '*', 'h*', '[gh]oldfast:states', '?oldfast*', '{holdfast-3}:x', '*:due'])
      expect(said(cache(), subject({ keys: ['photos:*', pattern] })), pattern).toEqual([
        `values.keys[1]: ${JSON.stringify(pattern)} can name holdfast's own keys (${JSON.stringify(
          pattern.startsWith('{') ? '{holdfast-*}*' : 'holdfast*',
        )}) on the queue's Redis (/etc/holdfast.yaml:2), which this provider shares: no consumer may reach them; ask for keys that cannot start like holdfast's`,
      ]);
  });

  it('refuses channels that name holdfast keys or carry their notifications, and lets the rest through', () => {
    expect(said(cache(), subject({ channels: ['__keyevent@0__:set'] }))[0]).toContain(
      `values.channels[0]: "__keyevent@0__:set" can name holdfast's own channels ("__keyevent@*")`,
    );
    expect(said(cache(), subject({ channels: ['__keyspace@0__:hold*'] }))[0]).toContain('("__keyspace@*__:holdfast*")');
    expect(said(cache(), subject({ keys: ['photos:*', 'hold', 'holdfas[^t]*'], channels: ['photos:*'] }))).toEqual([]);
    expect(said(cache({ ownNames: undefined }), subject({ keys: ['*'], channels: ['*'] }))).toEqual([]);
  });

  it("refuses the store's database on a mongodb-users provider on the store's server, in any case", () => {
    const catalog = providerConfig({
      adapter: mongodbUsers,
      contributionsPath: '/srv/contributions/catalog.yaml',
      policy: mongodbUsers.policySchema.parse({ allowedDatabases: ['records', 'RECORDS', 'photos'] }),
      ownNames: { server: "the record store's server (x:5)", keys: [], channels: [], databases: ['records'] },
    });
    for (const database of ['records', 'RECORDS'])
      expect(said(catalog, { id: 'photos', login: 'app_photos', values: { database } })).toEqual([
        `values.database: "${database}" is holdfast's own record store database on the record store's server (x:5), which this provider shares: no consumer's user is made there`,
      ]);
    expect(said(catalog, { id: 'photos', login: 'app_photos', values: { database: 'photos' } })).toEqual([]);
  });

  it('is refused by the worker too, whatever spec reached the queue', () => {
    const verdict = guardSpec(
      { config: cache() } as ProviderRuntime,
      'cache/holdfast',
      {
        login: 'app_holdfast',
        values: { keys: ['holdfast:*'], channels: [], commands: ['+@read'] },
        secretPath: '/srv/contributions/holdfast.secret',
      },
      'apply',
    );
    expect(verdict.kind).toBe('refused');
    expect(verdict.kind === 'refused' && verdict.refusal).toContain(
      `values.keys[0]: "holdfast:*" can name holdfast's own keys ("holdfast*")`,
    );
  });
});
