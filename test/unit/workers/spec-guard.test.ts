/** The policy where rights are applied: an apply is judged whole, a removal by its login alone. */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { DesiredSpec } from '../../../src/store/consumer-record.js';
import { guardSpec } from '../../../workers/spec-guard.js';
import type { ProviderRuntime } from '../../../workers/provider-runtime.js';
import { providerConfig } from '../../support/provider-config.js';

const config = providerConfig({
  adapter: redisAcl,
  contributionsPath: '/srv/contributions/cache.yaml',
  // tightened since the consumer was applied: +@write is no longer given
  policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
  reservedLogins: ['default'],
});
const provider = { config } as ProviderRuntime;
const spec: DesiredSpec = {
  login: 'app_photos',
  values: { keys: ['photos:*'], channels: [], commands: ['+@read', '+@write'] },
  secretPath: '/srv/contributions/photos.secret',
  specHash: 'h',
  source: '/srv/contributions/cache.yaml:2',
  removed: false,
  problems: [],
};

describe('guardSpec', () => {
  it('refuses to apply what the policy no longer gives, naming where the spec came from', () => {
    const verdict = guardSpec(provider, 'cache/photos', spec, 'apply');
    expect(verdict).toEqual({
      kind: 'refused',
      refusal: expect.stringContaining('/srv/contributions/cache.yaml:2') as string,
    });
    expect(verdict.kind === 'refused' && verdict.refusal).toContain('+@write');
  });

  it('still removes it: a removal widens no right, so only its login is judged', () => {
    expect(guardSpec(provider, 'cache/photos', spec, 'remove')).toEqual({ kind: 'allowed', values: spec.values });
  });

  it('removes no reserved login, whatever the record says', () => {
    expect(guardSpec(provider, 'cache/photos', { ...spec, login: 'default' }, 'remove')).toEqual({
      kind: 'refused',
      refusal: expect.stringContaining('"default"') as string,
    });
  });
});
