/**
 * A provider's resolved configuration for unit tests: what `loadConfig` would give, defaults applied, with the fields a
 * test names.
 */
import type { ProviderConfig } from '../../src/config/config.js';
import { DEFAULT_TIMING } from '../../src/config/load-config.js';

/**
 * A `manage` provider named `cache` at holdfast's default timing, with nothing reserved and no other provider's roots,
 * but for `given`.
 */
export function providerConfig(
  given: Pick<ProviderConfig, 'adapter' | 'contributionsPath'> & Partial<ProviderConfig>,
): ProviderConfig {
  return {
    name: 'cache',
    admin: { url: 'redis://127.0.0.1:6380' },
    policy: {},
    timing: { ...DEFAULT_TIMING },
    management: 'manage',
    removalGuard: { share: 0.25, floor: 2 },
    secretsRoot: undefined,
    adopt: false,
    reservedLogins: [],
    foreignSecretRoots: [],
    ...given,
  };
}
