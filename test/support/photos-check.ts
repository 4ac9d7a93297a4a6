/**
 * One check of consumer `cache/photos` (login `app_photos`, `+@read`) through the effects (`effects.check`) against
 * the adapter given, its grant secret in `dir`: for unit tests of what a check makes of a backend's answer.
 */
import { join } from 'node:path';
import type { Adapter } from '../../src/adapters/adapter.js';
import { redisAcl } from '../../src/adapters/redis-acl/index.js';
import { Scrubber } from '../../src/logging/scrubber.js';
import type { CheckMemo } from '../../src/queue/coordination.js';
import type { ConsumerContext } from '../../machines/consumer-machine.js';
import { createEffects, type CheckResult } from '../../workers/effects.js';
import type { ProviderGate } from '../../workers/provider-gate.js';
import { providerRuntime } from '../../workers/provider-runtime.js';
import { providerConfig } from './provider-config.js';

export interface PhotosCheck {
  /** Where the grant secret is (`photos.secret`) and the contributions path points. */
  dir: string;
  fingerprintKey: Buffer;
  /** The fingerprint of the secret the record says was applied. */
  appliedSecretMac: string;
  memo: CheckMemo | null;
}

export function photosCheck(adapter: Adapter, c: PhotosCheck): Promise<CheckResult> {
  const config = providerConfig({
    adapter: redisAcl,
    contributionsPath: join(c.dir, 'contributions.yaml'),
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
    secretsRoot: c.dir,
  });
  const gate = {
    admit: () => Promise.resolve({ admitted: true, probe: false }),
    answered: () => Promise.resolve(false),
    pause: () => Promise.resolve(true),
  } as unknown as ProviderGate;
  const effects = createEffects({
    fingerprintKey: c.fingerprintKey,
    gate,
    scrubber: new Scrubber(),
    now: () => new Date(),
  });
  const spec = {
    login: 'app_photos',
    values: { keys: [], channels: [], commands: ['+@read'] },
    secretPath: join(c.dir, 'photos.secret'),
    specHash: 'h1',
  };
  return effects.check({
    key: 'cache/photos',
    provider: providerRuntime(config, adapter),
    spec,
    context: { appliedSpecHash: 'h1', appliedSecretMac: c.appliedSecretMac } as ConsumerContext,
    appliedAt: 1,
    memo: c.memo,
  });
}
