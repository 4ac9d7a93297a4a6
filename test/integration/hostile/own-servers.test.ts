/**
 * holdfast's own servers are never a tenant's, on real servers: the run's shared Redis is both the
 * queue's and the provider's, the shared MongoDB wire server both the store's and the provider's.
 * Unsaid, `holdfast run` refuses the configuration naming both and applies nothing. Said
 * (`sharesHoldfastServer: true`), a consumer asking for holdfast's keys (`hf<tag>:*`, `*`, `h*`)
 * or the store's database is refused, and one that is held, logged in as itself, cannot list,
 * read or write a key holdfast keeps there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { redisLogin } from '../../backends/logins.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

const SHARED = '\n    sharesHoldfastServer: true';

describe("holdfast's own servers", () => {
  const fixture = engineFixtures();
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  /** The consumer's state and reason as the status reports them. */
  const stateOf = async (f: EngineFixture, key: string) => (await f.status()).consumers.find((c) => c.consumer === key);

  it("unsaid, a provider on the queue's Redis is refused at load naming both, and nothing is applied", async () => {
    const f = await fixture({ consumers: 1 });
    const config = join(f.dir, 'holdfast.yaml');
    const text = readFileSync(config, 'utf8');
    expect(text).toContain(SHARED); // the fixture says so: the run's Redis serves both
    writeFileSync(config, text.replace(SHARED, ''));
    const lines = text.replace(SHARED, '').split('\n');
    const line = (start: string) => lines.findIndex((l) => l.startsWith(start)) + 1;
    const { host, port } = f.provider;

    const run = spawnHoldfast(['run', '-c', config]);
    const code = await exitOf(run, 30_000);
    if (code === 'still running') run.kill('SIGKILL');
    expect(code).toBe(2);
    expect(run.output()).toContain('[CONFIG_INVALID]');
    expect(run.output()).toContain(
      `${config}:${line('    admin:')}: providers[0].admin: provider cache is on the queue's Redis ` +
        `(${host === '127.0.0.1' ? 'loopback' : host}:${port}, queue.url at ${config}:${line('  url:')}): ` +
        "a tenant of it could read and forge holdfast's keys",
    );
    expect(await redisLogin(f.provider, f.consumers[0]!.login, f.consumers[0]!.password)).toBe(false);
  });

  it("said, consumers asking for holdfast's keys are refused; one held cannot list, read or write them", async () => {
    const f = await fixture({
      consumers: 4,
      policy: '{ allowAllKeys: true, allowedCommands: ["+@read", "+@write", "+@connection"] }',
    });
    const prefix = f.config.queue.prefix; // hf<tag>
    const asks = [`c0000:*`, `${prefix}:*`, '*', 'h*'];
    f.writeContributions(f.consumers, (c) => asks[Number(c.id.slice(1))]!);
    await f.start();
    const [held, ...greedy] = f.consumers as [EngineFixture['consumers'][0], ...EngineFixture['consumers']];
    await f.until('the first held, the others refused', async () => {
      const states = await Promise.all(f.consumers.map((c) => stateOf(f, c.key)));
      return states[0]?.state === 'held' && states.slice(1).every((s) => s?.state === 'rejected');
    });
    for (const [i, c] of greedy.entries()) {
      expect((await stateOf(f, c.key))?.reason, c.key).toContain(
        `values.keys[0]: ${JSON.stringify(asks[i + 1])} can name holdfast's own keys ("${prefix}*") on the queue's Redis`,
      );
      expect(await f.canLogin(c), c.key).toBe(false);
    }

    const admin = new Redis({
      host: f.provider.host,
      port: f.provider.port,
      ...f.provider.admin,
      maxRetriesPerRequest: 0,
    });
    clients.push(admin);
    const states = `${prefix}:holdfast:states`;
    expect(await admin.hget(states, held.key)).toMatch(/^held /); // holdfast keeps it there

    const tenant = new Redis({
      host: f.provider.host,
      port: f.provider.port,
      username: held.login,
      password: held.password,
      maxRetriesPerRequest: 0,
    });
    clients.push(tenant);
    expect(await tenant.set('c0000:mine', 'ok')).toBe('OK');
    await expect(tenant.call('SCAN', '0', 'MATCH', `${prefix}:*`)).rejects.toThrow(/^NOPERM/);
    await expect(tenant.call('RANDOMKEY')).rejects.toThrow(/^NOPERM/);
    await expect(tenant.call('DBSIZE')).rejects.toThrow(/^NOPERM/);
    await expect(tenant.call('CLUSTER', 'GETKEYSINSLOT', '0', '10')).rejects.toThrow(/^NOPERM/);
    await expect(tenant.hget(states, held.key)).rejects.toThrow(/^NOPERM/);
    await expect(tenant.get(`${prefix}:holdfast:alive`)).rejects.toThrow(/^NOPERM/);
    await expect(tenant.hset(states, greedy[0]!.key, 'held 99')).rejects.toThrow(/^NOPERM/);
    await expect(tenant.hset(states, held.key, 'held 99')).rejects.toThrow(/^NOPERM/);
    expect(await admin.hget(states, held.key)).toMatch(/^held \d+ ~\S+$/); // as holdfast sealed it
    expect(await admin.hget(states, greedy[0]!.key)).not.toBe('held 99');
  });

  it("said, even an operator's open policy (every command, no deny list) gives a tenant no way to list, count or erase holdfast's keys", async () => {
    const f = await fixture({
      consumers: 1,
      policy: '{ allowAllKeys: true, allowAllCommands: true, deniedCommands: [] }',
    });
    f.writeContributions(
      f.consumers,
      (c) => `${c.id}:*`,
      () => ['+@all'],
    );
    await f.startHeld();
    const c = f.consumers[0]!;
    const tenant = new Redis({
      host: f.provider.host,
      port: f.provider.port,
      username: c.login,
      password: c.password,
      maxRetriesPerRequest: 0,
    });
    clients.push(tenant);
    expect(await tenant.set(`${c.id}:mine`, 'ok')).toBe('OK');
    for (const args of [
      ['SCAN', '0'],
      ['RANDOMKEY'],
      ['DBSIZE'],
      ['KEYS', '*'],
      ['CLUSTER', 'GETKEYSINSLOT', '0', '10'],
      ['CLUSTER', 'COUNTKEYSINSLOT', '0'],
      ['FLUSHALL'],
      ['CLIENT', 'PAUSE', '100'],
      ['PUBSUB', 'CHANNELS'],
    ])
      await expect(tenant.call(args[0]!, ...args.slice(1)), args.join(' ')).rejects.toThrow(/^NOPERM/);
    await expect(tenant.hget(`${f.config.queue.prefix}:holdfast:states`, c.key)).rejects.toThrow(/^NOPERM/);
  });

  it("said, a mongodb-users consumer whose database is the store's is refused, and no user is made there", async () => {
    const f = await fixture({ consumers: 2, adapterKind: 'mongodb-users', policy: '{ allowedDatabases: ["{id}"] }' });
    const store = f.config.store.database; // hf<tag>, on the same server
    expect(readFileSync(join(f.dir, 'holdfast.yaml'), 'utf8')).toContain(SHARED);
    const [ok, own] = f.consumers as [EngineFixture['consumers'][0], EngineFixture['consumers'][0]];
    const ids = { ok: `ok${f.tag}`, own: store };
    writeFileSync(
      join(f.dir, 'contributions/cache.yaml'),
      [
        'consumers:',
        `  - { id: ${ids.ok}, login: ${ok.login}, secret: ../grants/${ok.id}.secret, values: { database: ${ids.ok} } }`,
        `  - { id: ${ids.own}, login: ${own.login}, secret: ../grants/${own.id}.secret, values: { database: ${store} } }`,
        '',
      ].join('\n'),
    );
    await f.start();
    await f.until('the one in its own database held, the other refused', async () => {
      const [a, b] = [await stateOf(f, `cache/${ids.ok}`), await stateOf(f, `cache/${ids.own}`)];
      return a?.state === 'held' && b?.state === 'rejected';
    });
    expect((await stateOf(f, `cache/${ids.own}`))?.reason).toContain(
      `values.database: "${store}" is holdfast's own record store database on the record store's server`,
    );
    const { host, port, admin } = f.provider;
    const client = new MongoClient(`mongodb://${host}:${port}/?authSource=admin`, {
      auth: { username: admin.username, password: admin.password },
      serverSelectionTimeoutMS: 10_000,
    });
    try {
      const users = (await client.db(store).command({ usersInfo: own.login })) as { users: unknown[] };
      expect(users.users).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
