/**
 * What confirms a heal (`effects.confirm`): of a login that was missing, the light check where the
 * adapter has one (no rule set described: on Redis, no `ACL GETUSER` of a user that exists, about
 * 1.5 ms of the cache's one thread under load), and a deep check, which says why, only when the
 * light one does not pass; of rules or passwords that differed, a deep check (the brake and
 * quarantine count on seeing them changed back again).
 */
import { describe, expect, it } from 'vitest';
import type { Adapter, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import type { ConsumerContext } from '../../../machines/consumer-machine.js';
import { createEffects } from '../../../workers/effects.js';
import type { ProviderGate } from '../../../workers/provider-gate.js';
import { providerRuntime } from '../../../workers/provider-runtime.js';
import { providerConfig } from '../../support/provider-config.js';

/** A backend that answers the light check with `authenticates`, and records what it was asked. */
class Backend implements Adapter {
  readonly calls: string[] = [];
  constructor(private readonly authenticatesNow: boolean) {}
  create(): Promise<void> {
    return Promise.resolve();
  }
  authenticates(grant: Grant): Promise<boolean> {
    this.calls.push(`authenticates ${grant.login}`);
    return Promise.resolve(this.authenticatesNow);
  }
  holds(grant: Grant): Promise<HoldsAnswer> {
    this.calls.push(`holds ${grant.login}`);
    return Promise.resolve({ held: false, reason: 'password-differs', detail: 'the password differs' });
  }
  remove(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

async function confirmed(backend: Backend, found: string) {
  const config = providerConfig({
    adapter: redisAcl,
    contributionsPath: '/tmp/contributions.yaml',
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
  });
  const gate = {
    admit: () => Promise.resolve({ admitted: true, probe: false }),
    answered: () => Promise.resolve(false),
    pause: () => Promise.resolve(true),
  } as unknown as ProviderGate;
  const effects = createEffects({
    fingerprintKey: Buffer.alloc(32, 9),
    gate,
    scrubber: new Scrubber(),
    now: () => new Date(),
  });
  const spec = {
    login: 'app_photos',
    values: { keys: ['photos:*'], channels: [], commands: ['+@read'] },
    secretPath: '/unused',
    specHash: 'h1',
  };
  const input = {
    key: 'cache/photos',
    provider: providerRuntime(config, backend),
    spec,
    context: {} as ConsumerContext,
    appliedAt: 1,
    memo: null,
  };
  return effects.confirm(input, 'a-grant-secret-long-enough', found);
}

describe('a heal confirmed', () => {
  it('by the light check alone when the login authenticates: no rules described', async () => {
    const backend = new Backend(true);
    expect(await confirmed(backend, 'missing')).toEqual({ event: { type: 'HELD' }, deep: false });
    expect(backend.calls).toEqual(['authenticates app_photos']);
  });

  it('by a deep check, which says why, when it does not', async () => {
    const backend = new Backend(false);
    const result = await confirmed(backend, 'missing');
    expect(result.event).toMatchObject({ type: 'NOT_HELD', reason: 'password-differs' });
    expect(backend.calls).toEqual(['authenticates app_photos', 'holds app_photos']);
  });

  it('by a deep check alone when its rules or passwords differed: only a deep check sees them changed back again', async () => {
    for (const found of ['rules-differ', 'password-differs']) {
      const backend = new Backend(true);
      expect((await confirmed(backend, found)).deep).toBe(true);
      expect(backend.calls).toEqual(['holds app_photos']);
    }
  });
});
