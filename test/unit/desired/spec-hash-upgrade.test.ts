/**
 * A contributions entry that did not change keeps its spec hash across an upgrade of holdfast.
 * The sync tells a changed spec by its hash (`spec-digest.ts`), and a consumer whose hash is not
 * the one applied is applied again: a release that parsed the same entry into other values (a
 * default added to an adapter's values schema, a value spelled otherwise) or hashed it otherwise
 * would apply every consumer of that adapter again at start-up, their specs unchanged.
 *
 * The example's contributions, for every adapter, as the previous release (a442ce6) read them:
 * this release must read the same values and hash them the same way. A change that must alter them
 * is a change of what is applied: say so in the upgrade notes (docs/operating.md), and update these.
 */
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESCRIBED_ADAPTERS } from '../../../src/adapters/described-registry.js';
import { canonicalJson } from '../../../src/text/canonical-json.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { sha256Hex } from '../../../src/secrets/sha256.js';
import { providerConfig } from '../../support/provider-config.js';

const EXAMPLES = join(import.meta.dirname, '../../../examples');

/** The example's providers (examples/holdfast.yaml): adapter and policy. */
const PROVIDERS: Record<string, { kind: string; policy: unknown }> = {
  cache: {
    kind: 'redis-acl',
    policy: { keyPrefix: '{id}:', allowedCommands: ['+@read', '+@write', '+@connection', '+@pubsub'] },
  },
  ledger: { kind: 'postgres-roles', policy: { allowedDatabases: ['postgres'], allowedSchemas: [], allowedRoles: [] } },
  catalog: { kind: 'mongodb-users', policy: { allowedDatabases: ['{id}'], allowedRoles: [] } },
  assets: { kind: 's3-identities', policy: { bucketPrefix: '{id}-', allowedActions: ['Read', 'Write', 'List'] } },
};

/** Each example consumer's values as a442ce6 parsed them (what its records keep, and its hashes were made of). */
const PREVIOUS_RELEASE: Record<string, unknown> = {
  'cache/photos': { keys: ['photos:*'], channels: [], commands: ['+@read', '+@write', '+@connection'] },
  'cache/billing': {
    keys: ['billing:*'],
    channels: ['billing:*'],
    commands: ['+@read', '+@write', '+@connection', '+@pubsub'],
  },
  'cache/search': { keys: ['search:*'], channels: [], commands: ['+@read', '+@connection'] },
  'ledger/billing': { databases: ['postgres'], schemas: [], roles: [] },
  'ledger/reports': { databases: ['postgres'], schemas: [], roles: [] },
  'catalog/photos': { database: 'photos', roles: [] },
  'catalog/search': { database: 'search', roles: [] },
  'assets/photos': { buckets: ['photos-media'], actions: ['Read', 'Write', 'List'] },
  'assets/reports': { buckets: ['reports-archive'], actions: ['Read', 'List'] },
};

describe("an unchanged entry keeps the previous release's spec hash", () => {
  for (const [name, { kind, policy }] of Object.entries(PROVIDERS)) {
    it(`${name} (${kind})`, async () => {
      const adapter = DESCRIBED_ADAPTERS.get(kind)!;
      const contributionsPath = join(EXAMPLES, 'contributions', `${name}.yaml`);
      const state = await loadContributions(
        providerConfig({
          name,
          adapter,
          contributionsPath,
          policy: adapter.policySchema.parse(policy),
          secretsRoot: join(EXAMPLES, 'grants', name),
        }),
      );
      expect(state.consumers.length).toBeGreaterThan(0);
      for (const { key, desired } of state.consumers) {
        expect(desired.problems, key).toEqual([]);
        const values = PREVIOUS_RELEASE[key];
        expect(desired.values, key).toEqual(values);
        // the previous release's formula over the previous release's values
        const secretPath = resolve(dirname(contributionsPath), `../grants/${name}/${key.split('/')[1]!}.secret`);
        expect(desired.secretPath, key).toBe(secretPath);
        expect(desired.specHash, key).toBe(sha256Hex(canonicalJson({ login: desired.login, values, secretPath })));
      }
    });
  }
});
