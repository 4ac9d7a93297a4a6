import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { checkSpec, describeSpecProblem, type SpecSubject } from '../../../src/policy/spec-check.js';
import { providerConfig } from '../../support/provider-config.js';

/**
 * A redis-acl provider as loadConfig makes it: admin `cache-admin`, queue user `queue-user`, grants under /srv/grants.
 */
function provider(more: Partial<ProviderConfig> = {}): ProviderConfig {
  return providerConfig({
    adapter: redisAcl,
    admin: { url: 'redis://127.0.0.1:6380', username: 'cache-admin' },
    contributionsPath: '/srv/contributions/cache.yaml',
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read', '+@write'] }),
    secretsRoot: '/srv/grants',
    reservedLogins: ['cache-admin', 'queue-user', 'default'],
    reservedReasons: new Map([
      ['cache-admin', 'is the admin login of provider cache'],
      ['queue-user', "is the login of holdfast's queue (queue.username)"],
      ['default', "is the backends' built-in user (Redis's default), reserved on every provider"],
    ]),
    ...more,
  });
}

const photos: SpecSubject = {
  id: 'photos',
  login: 'app_photos',
  values: { keys: ['photos:*'], commands: ['+@read'] },
  secretPath: '/srv/grants/photos.secret',
};

/** The problems of `subject` on `config`, as the worker says them. */
function said(subject: SpecSubject, config = provider()): string[] {
  return checkSpec(config, subject).problems.map((p) => describeSpecProblem(p, subject));
}

describe('checkSpec', () => {
  it('passes a consumer the policy gives, with its values parsed (defaults applied)', () => {
    expect(checkSpec(provider(), photos)).toEqual({
      values: { keys: ['photos:*'], channels: [], commands: ['+@read'] },
      problems: [],
    });
  });

  it("refuses the provider's admin, the queue's user and `default`, saying why", () => {
    expect(said({ ...photos, login: 'cache-admin' })).toEqual([
      'login: "cache-admin" is the admin login of provider cache; no consumer may have it',
    ]);
    expect(said({ ...photos, login: 'queue-user' })).toEqual([
      'login: "queue-user" is the login of holdfast\'s queue (queue.username); no consumer may have it',
    ]);
    expect(said({ ...photos, login: 'default' })).toEqual([
      'login: "default" is the backends\' built-in user (Redis\'s default), reserved on every provider; no consumer may have it',
    ]);
    expect(
      said({ ...photos, login: 'other' }, provider({ reservedReasons: undefined, reservedLogins: ['other'] })),
    ).toEqual(['login: "other" is reserved; no consumer may have it']);
  });

  it('refuses a login outside the loginPrefix, and one that is no plain name', () => {
    expect(said(photos, provider({ loginPrefix: 'cache_' }))).toEqual([
      'login: "app_photos" does not start with "cache_", the loginPrefix of provider cache',
    ]);
    expect(said({ ...photos, login: 'app photos' })).toEqual([
      'login: "app photos" must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit',
    ]);
  });

  it('refuses an id that is no plain name (the worker takes it from a key a hand-written job chose)', () => {
    expect(said({ ...photos, id: 'pho\u2066tos' })).toContain(
      'id: "pho\u2066tos" must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit',
    );
    expect(said({ ...photos, id: 'x'.repeat(129) })[0]).toMatch(/^id: "x{128}"… must be 1 to 128/);
  });

  it("refuses a secret path outside the provider's roots, lexically (.. resolved), or relative", () => {
    expect(said({ ...photos, secretPath: '/srv/grants/../ledger/billing.secret' })).toEqual([
      'secret: "/srv/grants/../ledger/billing.secret" leaves the contributions file\'s directory or the provider\'s secretsRoot (/srv/grants)',
    ]);
    expect(said({ ...photos, secretPath: '/srv/contributions/photos.secret' })).toEqual([]);
    expect(said({ ...photos, secretPath: '/srv/grants' })).toHaveLength(1);
    expect(said({ ...photos, secretPath: 'grants/photos.secret' })).toEqual([
      'secret: "grants/photos.secret" is not an absolute path',
    ]);
    expect(said({ ...photos, secretPath: '/srv/grants/photos.secret' }, provider({ secretsRoot: undefined }))).toEqual([
      'secret: "/srv/grants/photos.secret" leaves the contributions file\'s directory (give the provider a secretsRoot to allow another)',
    ]);
    // a removal reads no secret: its path is not judged
    expect(said({ ...photos, secretPath: undefined })).toEqual([]);
  });

  it("parses the values (raw ACL tokens do not get through) and applies the adapter's policy", () => {
    const allCommands = { ...photos, values: { keys: ['photos:*'], commands: ['+@all'] } };
    expect(said(allCommands)).toEqual([
      'values.commands[0]: "+@all" is not among the commands allowed by the provider\'s policy (+@read +@write)',
    ]);
    const raw = { ...photos, values: { keys: ['photos:*'], commands: ['nopass'], extra: 1 } };
    expect(checkSpec(provider(), raw).values).toBeUndefined();
    expect(said(raw)).toEqual([
      'values.commands[0]: a command rule looks like "+@read", "-@dangerous", "+get" or "+config|get" (lowercase)',
      'values: Unrecognized key: "extra"',
    ]);
    expect(said({ ...photos, values: { keys: ['*'], commands: ['+@read'] } })).toEqual([
      'values.keys[0]: "*" is outside the key prefix "photos:" allowed by the provider\'s policy',
    ]);
  });

  it('lists every problem at once', () => {
    expect(
      said({
        id: 'photos',
        login: 'default',
        values: { keys: ['*'], commands: ['+@read'] },
        secretPath: '/etc/shadow',
      }),
    ).toHaveLength(3);
  });
});
