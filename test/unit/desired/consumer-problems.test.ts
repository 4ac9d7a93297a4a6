import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { providerConfig } from '../../support/provider-config.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-contributions-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function provider(more: Partial<ProviderConfig> = {}): ProviderConfig {
  return providerConfig({
    adapter: redisAcl,
    admin: { url: 'redis://127.0.0.1:6380', username: 'cache-admin' },
    contributionsPath: join(dir, 'cache.yaml'),
    policy: redisAcl.policySchema.parse({}),
    reservedLogins: ['cache-admin', 'default'],
    reservedReasons: new Map([['cache-admin', 'is the admin login of provider cache']]),
    ...more,
  });
}

describe("contributions: logins that are not the consumer's", () => {
  it("rejects the admin's login, `default` and a login outside loginPrefix, alone, naming file, line and field", async () => {
    const file = join(dir, 'cache.yaml');
    writeFileSync(
      file,
      `consumers:
  - id: photos
    login: cache_photos
    secret: photos.secret
  - id: admin
    login: cache-admin
    secret: admin.secret
  - id: builtin
    login: default
    secret: builtin.secret
  - id: stray
    login: app_stray
    secret: stray.secret
`,
    );
    const state = await loadContributions(provider({ loginPrefix: 'cache' }));
    const problems = Object.fromEntries(state.consumers.map((c) => [c.id, c.desired.problems]));
    expect(problems).toEqual({
      photos: [],
      admin: [
        `${file}:6: consumers[1].login: "cache-admin" is the admin login of provider cache; no consumer may have it`,
      ],
      builtin: [
        `${file}:9: consumers[2].login: "default" is reserved; no consumer may have it`,
        `${file}:9: consumers[2].login: "default" does not start with "cache", the loginPrefix of provider cache`,
      ],
      stray: [
        `${file}:12: consumers[3].login: "app_stray" does not start with "cache", the loginPrefix of provider cache`,
      ],
    });
  });
});
