/**
 * A login made by someone else between the check that found it missing and the heal's apply, on a real redis-server:
 * the apply refuses it and leaves it as it is. Redis offers no create-if-absent for ACL users (`ACL` may not run in a
 * script, `MULTI` runs every command it queued whatever an earlier one answered, `WATCH` watches keys, and no
 * `ACL SETUSER` rule fails on a user merely existing), so the apply reads the login again (`ACL GETUSER`) right before
 * its `ACL SETUSER`, whatever the check read: this test holds that read in place.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsumerContext } from '../../../machines/consumer-machine.js';
import type { Adapter, AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import { redisAcl, type RedisAclValues } from '../../../src/adapters/redis-acl/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { secretFingerprint } from '../../../src/secrets/fingerprint.js';
import { createEffects, type CheckInput } from '../../../workers/effects.js';
import type { ProviderGate } from '../../../workers/provider-gate.js';
import { providerRuntime } from '../../../workers/provider-runtime.js';
import { sharedBackend, testDir, type BackendEndpoint } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { providerConfig } from '../../support/provider-config.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(10_000) });

function adminOf(b: BackendEndpoint): AdminConnection {
  return { url: `redis://${b.host}:${b.port}`, username: b.admin.username, password: b.admin.password };
}

function grantFor(login: string, password: string): Grant<RedisAclValues> {
  return {
    login,
    password,
    values: redisAcl.valuesSchema.parse({ keys: [`${login}:*`], channels: [], commands: ['+@read'] }),
  };
}

/** How many `ACL SETUSER`s the server ran (`INFO commandstats`). */
async function setUsers(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

/** The user as `ACL GETUSER` shows it: what must not change. */
async function described(admin: Redis, login: string): Promise<unknown> {
  return admin.call('ACL', 'GETUSER', login);
}

describe('redis-acl: a login made by someone else after the check found it missing', () => {
  let b: BackendEndpoint;
  let admin: Redis;
  let adapter: Adapter<RedisAclValues>;

  beforeAll(() => {
    b = sharedBackend('redis');
    admin = new Redis(b.url, { maxRetriesPerRequest: 0 });
    adapter = redisAcl.connect(adminOf(b), { provider: 'race', adopt: false });
  });

  afterAll(async () => {
    admin.disconnect();
    await adapter.close();
  });

  /** Made by hand, as an operator or another tool would, once holdfast's check has read the login absent. */
  async function madeByHand(login: string): Promise<{ password: string; before: unknown }> {
    const password = hex(12);
    await admin.call('ACL', 'SETUSER', login, 'on', `>${password}`, '~theirs:*', '+get');
    return { password, before: await described(admin, login) };
  }

  it('refuses the batched apply (the heal path), sends no ACL SETUSER, and leaves the login as it was made', async () => {
    const login = `race_${hex(4)}`;
    const grant = grantFor(login, hex(12));
    const [checked] = await adapter.holdsMany!([grant], within());
    expect(checked).toMatchObject({ ok: true, value: { held: false, reason: 'missing' } });

    const theirs = await madeByHand(login);
    const sent = await setUsers(admin);
    const [applied] = await adapter.createMany!([grant], within());

    expect(applied!.ok).toBe(false);
    expect(!applied!.ok && isHoldfastError(applied!.error, 'BACKEND_REFUSED')).toBe(true);
    expect(await setUsers(admin)).toBe(sent);
    expect(await described(admin, login)).toEqual(theirs.before);
    expect(await redisLogin(b, login, theirs.password)).toBe(true);
    expect(await redisLogin(b, login, grant.password)).toBe(false);
  });

  it('refuses the heal as the effects perform it: checked missing, then APPLY_REFUSED, the login left as it was made', async () => {
    const login = `race_${hex(4)}`;
    const password = hex(12);
    const dir = testDir('claim-race');
    const secretPath = join(dir, `${login}.secret`);
    writeFileSync(secretPath, `${password}\n`, { mode: 0o600 });
    const fingerprintKey = randomBytes(32);
    const config = providerConfig({
      name: 'race',
      adapter: redisAcl,
      contributionsPath: join(dir, 'contributions.yaml'),
      admin: adminOf(b),
      policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
    });
    const gate = {
      admit: () => Promise.resolve({ admitted: true, probe: false }),
      answered: () => Promise.resolve(false),
      pause: () => Promise.resolve(true),
    } as unknown as ProviderGate;
    const effects = createEffects({ fingerprintKey, gate, scrubber: new Scrubber(), now: () => new Date() });
    const provider = providerRuntime(config, adapter);
    const input: CheckInput = {
      key: `race/${login}`,
      provider,
      spec: { login, values: grantFor(login, password).values, secretPath, specHash: 'h1' },
      context: {
        appliedSpecHash: 'h1',
        appliedSecretMac: secretFingerprint(fingerprintKey, password),
        reapplying: false,
      } as unknown as ConsumerContext,
      appliedAt: Date.now() - 60_000,
      memo: null,
    };

    const found = await effects.check(input);
    expect(found.event).toMatchObject({ type: 'NOT_HELD', reason: 'missing' });
    const theirs = await madeByHand(login);
    const applied = await effects.apply({ ...input, password: found.secret!() });

    expect(applied.type).toBe('APPLY_REFUSED');
    expect(JSON.stringify(applied)).not.toContain(password);
    expect(await described(admin, login)).toEqual(theirs.before);
    expect(await redisLogin(b, login, theirs.password)).toBe(true);
    expect(await redisLogin(b, login, password)).toBe(false);
  });
});
