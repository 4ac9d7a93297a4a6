/**
 * A `redis-acl` provider's deny list always wins, on a real redis-server of the test's own: a
 * tenant with the example's rules (`+@read +@write +@connection`) cannot erase, list or
 * disconnect the others, whatever it asks for, nor list their channels and subscribers
 * (`PUBSUB`) or track their keys by broadcast (`CLIENT TRACKING … BCAST`); the deep check
 * compares the deny list too. `SCAN` still shows other tenants' key names: Redis ACLs do not hide them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import {
  redisAcl,
  type RedisAclAdapter,
  type RedisAclPolicy,
  type RedisAclValues,
} from '../../../src/adapters/redis-acl/index.js';
import { ownBackend, type OwnedBackend } from '../../backends/index.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });
/** The example's `photos` entry (examples/contributions/cache.yaml). */
const EXAMPLE_COMMANDS = ['+@read', '+@write', '+@connection'];

describe("redis-acl: a tenant with the example's rules", () => {
  let b: OwnedBackend;
  let admin: Redis;
  const clients: Redis[] = [];
  const adminOf = (): AdminConnection => ({
    url: `redis://${b.host}:${b.port}`,
    username: b.admin.username,
    password: b.admin.password,
  });
  const policy = (input: unknown = {}): RedisAclPolicy => redisAcl.policySchema.parse(input);
  const connect = (providerPolicy: RedisAclPolicy) =>
    redisAcl.connect(adminOf(), { provider: 'cache', adopt: false }, providerPolicy) as RedisAclAdapter;
  const grantFor = (id: string, values: unknown): Grant<RedisAclValues> => ({
    login: `app_${id}_${hex(3)}`,
    password: hex(12),
    values: redisAcl.valuesSchema.parse(values),
  });

  /** Creates `grant` with `provider`'s policy and logs in as it. */
  async function tenant(grant: Grant<RedisAclValues>, providerPolicy = policy()): Promise<Redis> {
    const adapter = connect(providerPolicy);
    try {
      await adapter.create(grant, within());
      expect(await adapter.holds(grant, within())).toEqual({ held: true });
    } finally {
      await adapter.close();
    }
    const client = new Redis({
      host: b.host,
      port: b.port,
      username: grant.login,
      password: grant.password,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  }

  /**
   * What `ACL DRYRUN` says of `login` running `args`: OK, or why not (whatever enable-debug-command and the like say).
   */
  const dryRun = async (login: string, args: string[]) => String(await admin.call('ACL', 'DRYRUN', login, ...args));

  beforeAll(async () => {
    b = await ownBackend('redis');
    admin = new Redis({
      host: b.host,
      port: b.port,
      username: b.admin.username,
      password: b.admin.password,
      maxRetriesPerRequest: 0,
    });
    await admin.set('billing:invoice', 'due');
    await admin.call(
      'FUNCTION',
      'LOAD',
      "#!lua name=billinglib\nredis.register_function('billing_total', function() return 1 end)",
    );
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    admin.disconnect();
    await b.stop();
  });

  const refused: string[][] = [
    ['FLUSHALL'],
    ['FLUSHDB'],
    ['KEYS', '*'],
    ['CLIENT', 'LIST'],
    ['CLIENT', 'KILL', 'ID', '1'],
    ['CONFIG', 'GET', '*'],
    ['DEBUG', 'SLEEP', '0'],
    ['SWAPDB', '0', '1'],
    ['FUNCTION', 'FLUSH'],
    ['FUNCTION', 'DELETE', 'billinglib'],
  ];

  it("gets NOPERM for what would erase, list or disconnect the others, and another tenant's key and functions survive", async () => {
    const photos = grantFor('photos', { keys: ['photos:*'], commands: EXAMPLE_COMMANDS });
    const client = await tenant(photos);
    await client.set('photos:1', 'cat');
    expect(await client.get('photos:1')).toBe('cat');
    for (const args of refused) {
      const [command, ...rest] = args as [string, ...string[]];
      // DEBUG is refused before the ACL is asked unless enable-debug-command allows it: the ACL's own answer is
      // DRYRUN's
      if (command !== 'DEBUG') await expect(client.call(command, ...rest), args.join(' ')).rejects.toThrow(/^NOPERM/);
      expect(await dryRun(photos.login, args), args.join(' ')).toMatch(/no permissions to run the '[a-z|]+' command/);
    }
    expect(await admin.get('billing:invoice')).toBe('due');
    expect(JSON.stringify(await admin.call('FUNCTION', 'LIST'))).toContain('billinglib');
    expect(await client.get('photos:1')).toBe('cat');
  });

  it("still sees other tenants' key names with SCAN (ACLs do not hide names); -scan in deniedCommands takes it away", async () => {
    const open = await tenant(grantFor('photos', { keys: ['photos:*'], commands: EXAMPLE_COMMANDS }));
    const [, names] = (await open.call('SCAN', '0', 'COUNT', '1000')) as [string, string[]];
    expect(names).toContain('billing:invoice');
    await expect(open.get('billing:invoice')).rejects.toThrow(/^NOPERM/);

    const closed = await tenant(
      grantFor('photos', { keys: ['photos:*'], commands: EXAMPLE_COMMANDS }),
      policy({ deniedCommands: ['-@dangerous', '-@admin', '-function', '-scan'] }),
    );
    await expect(closed.call('SCAN', '0')).rejects.toThrow(/^NOPERM/);
  });

  it("cannot list other tenants' channels or subscribers, nor track every key by broadcast; publish and subscribe within its own channels still work", async () => {
    const pubsub = [...EXAMPLE_COMMANDS, '+@pubsub'];
    const billing = grantFor('billing', { keys: ['billing:*'], channels: ['billing:*'], commands: pubsub });
    const photos = grantFor('photos', { keys: ['photos:*'], channels: ['photos:*'], commands: pubsub });
    const [billingClient, photosClient] = [await tenant(billing), await tenant(photos)];
    // billing listens on its channel, photos on its own
    const listener = billingClient.duplicate();
    clients.push(listener);
    const heard: string[] = [];
    listener.on('message', (channel: string, message: string) => heard.push(`${channel} ${message}`));
    await listener.subscribe('billing:invoices');
    const photosListener = photosClient.duplicate();
    clients.push(photosListener);
    await photosListener.subscribe('photos:uploads');

    for (const args of [
      ['PUBSUB', 'CHANNELS', '*'],
      ['PUBSUB', 'CHANNELS', 'billing:*'],
      ['PUBSUB', 'NUMSUB', 'billing:invoices'],
      ['PUBSUB', 'NUMPAT'],
      ['PUBSUB', 'SHARDCHANNELS'],
      ['PUBSUB', 'SHARDNUMSUB', 'billing:invoices'],
      ['CLIENT', 'TRACKING', 'ON', 'BCAST'],
      ['CLIENT', 'TRACKING', 'ON', 'BCAST', 'PREFIX', 'billing:'],
    ]) {
      await expect(photosClient.call(args[0]!, ...args.slice(1)), args.join(' ')).rejects.toThrow(/^NOPERM/);
    }
    // within its own channels nothing is lost; another's channel stays closed
    expect(await photosClient.publish('photos:uploads', 'cat.jpg')).toBe(1);
    expect(await billingClient.publish('billing:invoices', 'due')).toBe(1);
    await expect(photosClient.publish('billing:invoices', 'forged')).rejects.toThrow(/^NOPERM/);
    await expect.poll(() => heard, { timeout: 10_000 }).toEqual(['billing:invoices due']);
  });

  it("with the deny list as it was (no -pubsub -client|tracking), PUBSUB CHANNELS * lists another tenant's channel and BCAST tracking with no prefix is taken (the measured hole)", async () => {
    const pubsub = [...EXAMPLE_COMMANDS, '+@pubsub'];
    const before = policy({ deniedCommands: ['-@dangerous', '-@admin', '-function'] });
    const billingClient = await tenant(
      grantFor('billing', { keys: ['billing:*'], channels: ['billing:*'], commands: pubsub }),
      before,
    );
    const photosClient = await tenant(
      grantFor('photos', { keys: ['photos:*'], channels: ['photos:*'], commands: pubsub }),
      before,
    );
    const listener = billingClient.duplicate();
    clients.push(listener);
    await listener.subscribe('billing:payroll');
    expect(await photosClient.call('PUBSUB', 'CHANNELS', '*')).toContain('billing:payroll');
    expect(await photosClient.call('CLIENT', 'TRACKING', 'ON', 'BCAST')).toBe('OK');
  });

  it('cannot get past the deny list by asking for more: "+@all" and "+flushall" are overruled', async () => {
    const greedy = grantFor('greedy', {
      keys: ['greedy:*'],
      commands: ['+@all', '+flushall', '+client|kill', '+config|get'],
    });
    const client = await tenant(greedy, policy({ allowAllCommands: true }));
    for (const args of [['FLUSHALL'], ['CLIENT', 'KILL', 'ID', '1'], ['CONFIG', 'GET', '*']]) {
      await expect(client.call(args[0]!, ...args.slice(1)), args.join(' ')).rejects.toThrow(/^NOPERM/);
    }
    expect(await admin.get('billing:invoice')).toBe('due');
  });

  it("without a deny list, the example's rules alone would allow FLUSHALL (the measured hole; asked with DRYRUN only)", async () => {
    const bare = grantFor('bare', { keys: ['bare:*'], commands: EXAMPLE_COMMANDS });
    await tenant(bare, policy({ deniedCommands: [] }));
    expect(await dryRun(bare.login, ['FLUSHALL'])).toBe('OK');
    expect(await dryRun(bare.login, ['FUNCTION', 'FLUSH'])).toBe('OK');
  });

  it('the deep check compares the deny list: a deny rule undone by hand, or a deny list that changed, is not held', async () => {
    const photos = grantFor('photos', { keys: ['photos:*'], commands: EXAMPLE_COMMANDS });
    await tenant(photos);
    const adapter = connect(policy());
    const stricter = connect(policy({ deniedCommands: ['-@dangerous', '-@admin', '-function', '-scan'] }));
    try {
      expect(await stricter.holds(photos, within())).toMatchObject({
        held: false,
        reason: 'rules-differ',
        detail: expect.stringContaining('the backend allows SCAN, which the deny list withholds') as unknown,
      });
      await admin.call('ACL', 'SETUSER', photos.login, '+flushall');
      const answer = await adapter.holds(photos, within());
      expect(answer).toMatchObject({ held: false, reason: 'rules-differ' });
      expect(answer.held ? '' : answer.detail).toMatch(
        /^commands: the backend allows FLUSHALL, which the deny list withholds/,
      );
      await adapter.create(photos, within());
      expect(await adapter.holds(photos, within())).toEqual({ held: true });
      expect(await dryRun(photos.login, ['FLUSHALL'])).toMatch(/no permissions/);
    } finally {
      await adapter.close();
      await stricter.close();
    }
  });
});
