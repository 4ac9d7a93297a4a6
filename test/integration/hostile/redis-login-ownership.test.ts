/**
 * Logins that are not a `redis-acl` provider's own are never touched, on a real redis-server:
 * `default` and the admin's login, a login made by hand before holdfast, another provider's
 * login on the same Redis. Only `adopt: true` takes over an unmarked login, never another
 * provider's. The mark survives the consumer's own rules (`&*` included) and hand changes of
 * them; a login whose mark is stripped is no longer held.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant, Ownership } from '../../../src/adapters/adapter.js';
import { redisAcl, type RedisAclAdapter, type RedisAclValues } from '../../../src/adapters/redis-acl/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { ownBackend, sharedBackend, type BackendEndpoint, type OwnedBackend } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });
const adminOf = (b: BackendEndpoint, username = b.admin.username, password = b.admin.password): AdminConnection => ({
  url: `redis://${b.host}:${b.port}`,
  username,
  password,
});
const connect = (b: BackendEndpoint, ownership: Ownership, admin = adminOf(b)) =>
  redisAcl.connect(admin, ownership) as RedisAclAdapter;
const grantFor = (login: string, values: unknown = {}): Grant<RedisAclValues> => ({
  login,
  password: hex(12),
  values: redisAcl.valuesSchema.parse({ keys: [`${login}:*`], ...(values as object) }),
});

/** What the admin sees of a user: the whole `ACL GETUSER` reply. */
const getUser = (admin: Redis, login: string) => admin.call('ACL', 'GETUSER', login);

/** The adapter's refusal: BACKEND_REFUSED, its message. */
async function refusal(call: Promise<unknown>): Promise<string> {
  const error: unknown = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isHoldfastError(error, 'BACKEND_REFUSED'), `expected BACKEND_REFUSED, got ${String(error)}`).toBe(true);
  return (error as Error).message;
}

describe("redis-acl: logins that are not the provider's", () => {
  const b = sharedBackend('redis');
  let admin: Redis;
  let cache: RedisAclAdapter;
  const made: string[] = [];
  const login = () => {
    const l = `hfo_${hex(5)}`;
    made.push(l);
    return l;
  };

  beforeAll(() => {
    admin = new Redis(b.url, { maxRetriesPerRequest: 0 });
    cache = connect(b, { provider: 'cache', adopt: false });
  });
  afterAll(async () => {
    if (made.length > 0) await admin.call('ACL', 'DELUSER', ...made);
    admin.disconnect();
    await cache.close();
  });

  it('leaves a login made by hand as it is: create refused naming login, provider and adopt; not listed, not removed, not held', async () => {
    const name = login();
    await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>made-by-hand', `~${name}:*`, '+get');
    const before = await getUser(admin, name);
    const grant = grantFor(name);
    const message = await refusal(cache.create(grant, within()));
    expect(message).toContain(`"${name}"`);
    expect(message).toContain('provider "cache"');
    expect(message).toContain('adopt: true');
    expect(message).not.toContain(grant.password);
    expect(await cache.holds(grant, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining("lacks holdfast's mark") as unknown,
    });
    expect(await cache.list(name, within())).toEqual([]);
    await cache.remove(name, within());
    expect(await getUser(admin, name)).toEqual(before);
    expect(await redisLogin(b, name, 'made-by-hand')).toBe(true);
    expect(await redisLogin(b, name, grant.password)).toBe(false);
  });

  it('takes a login made by hand over with adopt: true, and marks it as its own', async () => {
    const name = login();
    await admin.call('ACL', 'SETUSER', name, 'reset', 'on', '>made-by-hand', '~*', '+@all');
    const adopting = connect(b, { provider: 'cache', adopt: true });
    try {
      const grant = grantFor(name);
      await adopting.create(grant, within());
      expect(await redisLogin(b, name, grant.password)).toBe(true);
      expect(await redisLogin(b, name, 'made-by-hand')).toBe(false);
      expect(await adopting.holds(grant, within())).toEqual({ held: true });
      // marked: the provider that does not adopt holds it, lists it and may remove it too
      expect(await cache.holds(grant, within())).toEqual({ held: true });
      expect(await cache.list(name, within())).toEqual([name]);
      expect(JSON.stringify(await getUser(admin, name))).toContain('&holdfast-managed:cache');
      await cache.remove(name, within());
      expect(await getUser(admin, name)).toBeNull();
    } finally {
      await adopting.close();
    }
  });

  it("two providers on one Redis: the second is refused the first's login, adopt or not; the first's password stays", async () => {
    const name = login();
    const first = grantFor(name);
    await cache.create(first, within());
    const second = connect(b, { provider: 'sessions', adopt: false });
    const secondAdopting = connect(b, { provider: 'sessions', adopt: true });
    try {
      for (const adapter of [second, secondAdopting]) {
        const claim = grantFor(name);
        const message = await refusal(adapter.create(claim, within()));
        expect(message).toContain('carries the mark of provider "cache", not "sessions"\'s');
        expect(await adapter.holds(claim, within())).toMatchObject({ held: false, reason: 'rules-differ' });
        expect(await adapter.list(name, within())).toEqual([]);
        await adapter.remove(name, within());
        expect(await redisLogin(b, name, claim.password)).toBe(false);
      }
      expect(await redisLogin(b, name, first.password)).toBe(true);
      expect(await cache.holds(first, within())).toEqual({ held: true });
      expect(await cache.list(name, within())).toEqual([name]);
    } finally {
      await second.close();
      await secondAdopting.close();
    }
  });

  it("a consumer cannot forge another provider's mark with a channel pattern of its own", async () => {
    const forged = grantFor(login(), { channels: ['holdfast-managed:sessions'] });
    await cache.create(forged, within());
    const sessions = connect(b, { provider: 'sessions', adopt: false });
    try {
      expect(await sessions.list(forged.login, within())).toEqual([]);
      expect(await refusal(sessions.create(grantFor(forged.login), within()))).toContain(
        'carries the mark of provider "cache"',
      );
      await sessions.remove(forged.login, within());
      expect(await cache.holds(forged, within())).toEqual({ held: true });
    } finally {
      await sessions.close();
    }
  });

  it("lists only its own provider's logins under a prefix, never one made by hand or by another provider", async () => {
    const prefix = `hfo_${hex(3)}_`;
    const [own, other, byHand] = ['own', 'other', 'hand'].map((s) => `${prefix}${s}`) as [string, string, string];
    made.push(own, other, byHand);
    const sessions = connect(b, { provider: 'sessions', adopt: false });
    try {
      await cache.create(grantFor(own), within());
      await sessions.create(grantFor(other), within());
      await admin.call('ACL', 'SETUSER', byHand, 'on', '>made-by-hand', '+get');
      expect(await cache.list(prefix, within())).toEqual([own]);
      expect(await sessions.list(prefix, within())).toEqual([other]);
    } finally {
      await sessions.close();
    }
  });

  it('keeps the mark whatever the consumer\'s channels, "*" included, and through hand changes of its rules', async () => {
    const grant = grantFor(login(), { channels: ['*'], commands: ['+@read', '+@pubsub'] });
    await cache.create(grant, within());
    expect(await cache.holds(grant, within())).toEqual({ held: true });
    // changed by hand: channels and commands; still its own, so healed
    await admin.call('ACL', 'SETUSER', grant.login, 'resetchannels', '&elsewhere', '+@all', 'allchannels');
    expect(await cache.holds(grant, within())).toMatchObject({ held: false, reason: 'rules-differ' });
    expect(await cache.list(grant.login, within())).toEqual([grant.login]);
    await cache.create(grant, within());
    expect(await cache.holds(grant, within())).toEqual({ held: true });
    // the mark grants nothing: a consumer without channels cannot use the mark's channel
    const quiet = grantFor(login(), { commands: ['+@pubsub'] });
    await cache.create(quiet, within());
    const client = new Redis({
      host: b.host,
      port: b.port,
      username: quiet.login,
      password: quiet.password,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    try {
      await expect(client.publish('holdfast-managed:cache', 'x')).rejects.toThrow(/NOPERM/);
    } finally {
      client.disconnect();
    }
  });

  it('no longer holds, nor applies, a login whose mark was stripped by hand', async () => {
    const grant = grantFor(login());
    await cache.create(grant, within());
    await admin.call('ACL', 'SETUSER', grant.login, 'clearselectors');
    expect(await cache.holds(grant, within())).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining("lacks holdfast's mark") as unknown,
    });
    await refusal(cache.create(grant, within()));
    await cache.remove(grant.login, within());
    expect(await getUser(admin, grant.login)).not.toBeNull();
  });
});

describe('redis-acl: the admin\'s own login and "default", on a server of the test\'s own', () => {
  let b: OwnedBackend;
  let admin: Redis;
  let cache: RedisAclAdapter;
  const made: string[] = [];
  const login = () => {
    const l = `hfo_${hex(5)}`;
    made.push(l);
    return l;
  };

  beforeAll(async () => {
    b = await ownBackend('redis');
    admin = new Redis({
      host: b.host,
      port: b.port,
      username: b.admin.username,
      password: b.admin.password,
      maxRetriesPerRequest: 0,
    });
    admin.on('error', () => undefined);
    cache = connect(b, { provider: 'cache', adopt: false });
  });
  afterAll(async () => {
    admin.disconnect();
    await cache.close();
    await b.stop();
  });

  it('refuses "default", the admin\'s own login, adopt or not: the admin still logs in and its ACL user is unchanged', async () => {
    expect(b.admin.username).toBe('default');
    const before = await getUser(admin, 'default');
    const adopting = connect(b, { provider: 'cache', adopt: true });
    try {
      for (const adapter of [cache, adopting]) {
        const grant = grantFor('default');
        expect(await refusal(adapter.create(grant, within()))).toContain(
          'the login "default" is Redis\'s default user',
        );
        expect(await redisLogin(b, 'default', grant.password)).toBe(false);
        await adapter.remove('default', within());
        expect(await adapter.holds(grant, within())).toMatchObject({ held: false, reason: 'rules-differ' });
      }
    } finally {
      await adopting.close();
    }
    expect(await redisLogin(b, 'default', b.admin.password)).toBe(true);
    expect(await getUser(admin, 'default')).toEqual(before);
  });

  it('refuses the admin\'s own login when it is not "default", adopt or not', async () => {
    const name = login();
    const password = hex(12);
    await admin.call('ACL', 'SETUSER', name, 'reset', 'on', `>${password}`, '~*', '&*', '+@all');
    const before = await getUser(admin, name);
    const adopting = connect(b, { provider: 'cache', adopt: true }, adminOf(b, name, password));
    try {
      expect(await refusal(adopting.create(grantFor(name), within()))).toContain(
        `the login "${name}" is the admin's own login`,
      );
      await adopting.remove(name, within());
    } finally {
      await adopting.close();
    }
    expect(await redisLogin(b, name, password)).toBe(true);
    expect(await getUser(admin, name)).toEqual(before);
  });
});

describe('redis-acl: the mark on a server whose acl-pubsub-default is allchannels', () => {
  it('is applied and read back', async () => {
    const b = await ownBackend('redis', { redisArgs: ['--acl-pubsub-default', 'allchannels'] });
    const adapter = connect(b, { provider: 'cache', adopt: false });
    try {
      for (const channels of [[], ['*'], ['x:events']]) {
        const grant = grantFor(`hfo_${hex(5)}`, { channels });
        await adapter.create(grant, within());
        expect(await adapter.holds(grant, within())).toEqual({ held: true });
        expect(await adapter.list(grant.login, within())).toEqual([grant.login]);
      }
    } finally {
      await adapter.close();
    }
  });
});

describe('a redis-acl consumer whose login was made by hand before holdfast', () => {
  const fixture = engineFixtures();

  it('is refused, said once, red, and left as it is; with adopt: true it is taken over', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 2,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const [taken, other] = f.consumers as [Consumer, Consumer];
    const admin = new Redis(provider.url, { maxRetriesPerRequest: 0 });
    try {
      await admin.call('ACL', 'SETUSER', taken.login, 'on', '>somebody-elses-password', '~*', '+@all');
      const before = await getUser(admin, taken.login);
      const engine = await f.start();
      await f.until('one held, one refused', async () => {
        const states = new Map((await f.status()).consumers.map((c) => [c.consumer, c.state]));
        return states.get(other.key) === 'held' && states.get(taken.key) === 'applyRefused';
      });
      await new Promise((r) => setTimeout(r, 1500)); // three intervals: nothing is tried again meanwhile
      const status = await f.status();
      expect(status.healthy).toBe(false);
      const shown = status.consumers.find((c) => c.consumer === taken.key)!;
      expect(shown).toMatchObject({ state: 'applyRefused', healthy: false, nextAt: null });
      expect(shown.reason).toContain(
        `the ACL user "${taken.login}" exists but was not made by holdfast for provider "cache"`,
      );
      expect(f.logsFor(taken).filter((l) => l.msg.startsWith('apply refused by the backend'))).toHaveLength(1);
      expect(await getUser(admin, taken.login)).toEqual(before);
      expect(await f.canLogin(taken)).toBe(false);
      expect(engine).toBe(f.engines[0]);
      for (const e of f.engines.splice(0)) await e.stop();

      // the provider adopts; asked again (a refused apply waits for a person), it is taken over
      f.config = { ...f.config, providers: f.config.providers.map((p) => ({ ...p, adopt: true })) };
      const adopting = await f.start();
      await adopting.queue.send(taken.key, { type: 'REAPPLY' });
      await f.until('taken over', async () => (await f.allHeld()) && (await f.canLogin(taken)));
      expect(JSON.stringify(await getUser(admin, taken.login))).toContain('&holdfast-managed:cache');
      expect(await redisLogin(provider, taken.login, 'somebody-elses-password')).toBe(false);
    } finally {
      admin.disconnect();
    }
  });
});
