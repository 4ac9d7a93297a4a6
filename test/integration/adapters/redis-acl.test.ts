/**
 * The `redis-acl` adapter against a real redis-server: the conformance suite, then what only
 * Redis has: changes made by hand (found by meaning, whatever order the server writes rules in),
 * the password on the wire, the ACL file, a frozen server, and the command table read once per
 * connection (no scratch user, no write, for any check).
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import { RedisAclAdapter, redisAcl, type RedisAclValues } from '../../../src/adapters/redis-acl/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { ownBackend, sharedBackend, testDir, type BackendEndpoint, type OwnedBackend } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { freePort } from '../../backends/ports.js';
import { describeAdapterConformance } from './conformance.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });

function adminOf(b: BackendEndpoint): AdminConnection {
  return { url: `redis://${b.host}:${b.port}`, username: b.admin.username, password: b.admin.password };
}

function grantFor(login: string, password: string, values: unknown = {}): Grant<RedisAclValues> {
  const defaults = { keys: [`${login}:*`], channels: [`${login}:events`] };
  const { keys, ...rest } = { ...defaults, ...(values as object) } as { keys: string[] };
  // the schema refuses a repeated pattern; the adapter still copes with one (a record from before the bound)
  return { login, password, values: { ...redisAcl.valuesSchema.parse({ ...rest, keys: [...new Set(keys)] }), keys } };
}

const canLogin = redisLogin;

function adminClient(b: BackendEndpoint): Redis {
  const client = new Redis(b.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  return client;
}

/** `calls` of one command in `INFO commandstats`, e.g. `acl|setuser`. */
async function calls(client: Redis, command: string): Promise<{ calls: number; usecPerCall: number }> {
  const info = await client.info('commandstats');
  const line = info.split('\r\n').find((l) => l.startsWith(`cmdstat_${command}:`));
  return {
    calls: Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0),
    usecPerCall: Number(/usec_per_call=([\d.]+)/.exec(line ?? '')?.[1] ?? 0),
  };
}

/** A TCP relay that records every byte a client sends to `b`. */
async function wireTap(b: BackendEndpoint): Promise<{ url: string; sent(): string; close(): Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(b.port, b.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    sent: () => Buffer.concat(chunks).toString('utf8'),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describeAdapterConformance('redis-acl', async () => {
  const b = await ownBackend('redis');
  const nowhere = await freePort();
  return {
    connect: () => redisAcl.connect(adminOf(b), { provider: 'test', adopt: false }),
    connectUnreachable: () =>
      redisAcl.connect({ url: `redis://127.0.0.1:${nowhere}`, password: hex(12) }, { provider: 'test', adopt: false }),
    grant: (login, password) => grantFor(login, password),
    canLogin: (login, password) => canLogin(b, login, password),
    // Redis echoes a modifier it refuses, so a password that is also a rule shows the scrubbing.
    refusedGrant: (login) => {
      const password = `hfbogus${hex(6)}`;
      return grantFor(login, password, { commands: [`+${password}`] });
    },
    stopBackend: async () => {
      const admin = adminClient(b);
      await admin.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
      admin.disconnect();
    },
    // Not keeping data: the server may still be exiting, and a restart that keeps data would ask it to SAVE.
    startBackend: () => b.restart({ keepData: false }),
  };
});

describe('redis-acl: what holds sees of changes made by hand', () => {
  const b = sharedBackend('redis');
  let adapter: RedisAclAdapter;
  let admin: Redis;
  const logins: string[] = [];

  beforeAll(() => {
    adapter = new RedisAclAdapter(adminOf(b), { provider: 'test', adopt: false });
    admin = adminClient(b);
  });
  afterAll(async () => {
    for (const l of logins) await admin.call('ACL', 'DELUSER', l);
    admin.disconnect();
    await adapter.close();
  });

  async function held(values: unknown = {}): Promise<Grant<RedisAclValues>> {
    const login = `hfr_${hex(5)}`;
    logins.push(login);
    const grant = grantFor(login, hex(12), values);
    await adapter.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true });
    return grant;
  }

  async function answer(grant: Grant<RedisAclValues>) {
    const a = await adapter.holds(grant, within());
    if (a.held) return { reason: 'held', detail: '' };
    expect(a.detail).not.toContain(grant.password);
    expect(a.detail).not.toContain(sha256(grant.password));
    return a;
  }

  it('says rules-differ, naming keys and both values, when a key pattern is changed', async () => {
    const g = await held();
    await admin.call('ACL', 'SETUSER', g.login, 'resetkeys', '~other:*');
    const a = await answer(g);
    expect(a.reason).toBe('rules-differ');
    expect(a.detail).toContain('keys');
    expect(a.detail).toContain('~other:*');
    expect(a.detail).toContain(`~${g.login}:*`);
  });

  it('says rules-differ, naming channels, when a channel is added', async () => {
    const g = await held();
    await admin.call('ACL', 'SETUSER', g.login, '&elsewhere');
    const a = await answer(g);
    expect(a.reason).toBe('rules-differ');
    expect(a.detail).toMatch(/^channels: .*&elsewhere/);
  });

  it('says rules-differ, naming commands, when a command rule is changed', async () => {
    const g = await held();
    await admin.call('ACL', 'SETUSER', g.login, '+flushall');
    const a = await answer(g);
    expect(a.reason).toBe('rules-differ');
    expect(a.detail).toBe('commands: the backend also allows FLUSHALL'); // the consumer's own rules deny @dangerous
  });

  it('finds each change made by hand, and says what it allows or lacks by call or pattern', async () => {
    const changes: Array<[rules: string[], detail: RegExp]> = [
      [['+flushdb'], /^commands: the backend allows FLUSHDB, which the deny list withholds$/],
      [['+pubsub|numpat'], /^commands: the backend allows PUBSUB\|NUMPAT, which the deny list withholds$/],
      [['+config|help'], /^commands: the backend also allows CONFIG\|HELP$/],
      [['-get'], /^commands: the backend lacks GET$/],
      [['-@string'], /^commands: the backend lacks APPEND, DECR, .* and \d+ more$/],
      [['%R~*'], /^keys: the backend also allows %R~\* \(/],
      [['&*'], /^channels: the backend also allows &\* and lacks &hfr_\w+:events \(/],
      [['(~secret:* +get)'], /^selectors: the backend has 1 selector\(s\) that allow calls, "\(~secret:\* .*\+get\)"/],
    ];
    for (const [rules, detail] of changes) {
      const g = await held({ commands: ['+@read', '+@write', '+@connection', '+@pubsub'] }); // the README's
      await admin.call('ACL', 'SETUSER', g.login, ...rules);
      const a = await answer(g);
      expect(`${rules.join(' ')}: ${a.reason}: ${a.detail}`).toMatch(
        new RegExp(`: rules-differ: ${detail.source.slice(1)}`),
      );
      await adapter.create(g, within());
      expect(await adapter.holds(g, within())).toEqual({ held: true });
    }
  });

  it('says rules-differ when a selector is added', async () => {
    const g = await held();
    await admin.call('ACL', 'SETUSER', g.login, '(~secret:* +get)');
    const a = await answer(g);
    expect(a.reason).toBe('rules-differ');
    expect(a.detail).toContain('selector');
  });

  it('compares rules as the server spells them: explicit commands, "*" and duplicate patterns', async () => {
    await held({ keys: ['a:*', 'a:*', 'b:*'], commands: ['+get', '+config|get', '-@all', '+ping'] });
    await held({ keys: ['x:*', '*'], channels: ['*'], commands: ['+@all', '-@dangerous'] });
  });

  it('says disabled when the user is turned off', async () => {
    const g = await held();
    await admin.call('ACL', 'SETUSER', g.login, 'off');
    expect((await answer(g)).reason).toBe('disabled');
  });

  it('says password-differs when the password is changed, added to or removed', async () => {
    const changed = await held();
    await admin.call('ACL', 'SETUSER', changed.login, 'resetpass', `>${hex(8)}`);
    expect((await answer(changed)).reason).toBe('password-differs');

    const added = await held();
    await admin.call('ACL', 'SETUSER', added.login, `>${hex(8)}`);
    expect(await answer(added)).toMatchObject({
      reason: 'password-differs',
      detail: expect.stringContaining('1 other') as unknown,
    });

    const open = await held();
    await admin.call('ACL', 'SETUSER', open.login, 'nopass');
    expect((await answer(open)).reason).toBe('password-differs');
  });

  it('says missing when the user is deleted', async () => {
    const g = await held();
    await admin.call('ACL', 'DELUSER', g.login);
    expect((await answer(g)).reason).toBe('missing');
  });

  it("lists managed logins by prefix, never an earlier release's scratch users", async () => {
    const g = await held();
    expect(await adapter.list(g.login, within())).toEqual([g.login]);
    expect(await adapter.list('holdfast-canon-', within())).toEqual([]);
  });

  it('sends the SHA-256 of the password, never the password', async () => {
    const tap = await wireTap(b);
    const tapped = new RedisAclAdapter({ ...adminOf(b), url: tap.url }, { provider: 'test', adopt: false });
    try {
      const login = `hfr_${hex(5)}`;
      logins.push(login);
      const grant = grantFor(login, `plain-${hex(10)}`);
      await tapped.create(grant, within());
      expect(await tapped.holds(grant, within())).toEqual({ held: true });
      const rotated = { ...grant, password: `plain-${hex(10)}` };
      await tapped.create(rotated, within());
      expect(await tapped.holds(rotated, within())).toEqual({ held: true });
      const wire = tap.sent();
      expect(wire).toContain('SETUSER');
      for (const g of [grant, rotated]) {
        expect(wire).toContain(`#${sha256(g.password)}`);
        expect(wire).not.toContain(g.password);
      }
      expect(wire).not.toContain('>');
    } finally {
      await tapped.close();
      await tap.close();
    }
  });

  it('creates and holds without CONFIG: an admin that may not read the configuration does not save, and does not fail', async () => {
    const name = `hfadm_${hex(4)}`;
    const pw = hex(12);
    logins.push(name);
    await admin.call('ACL', 'SETUSER', name, 'reset', 'on', `>${pw}`, '~*', '&*', '+@all', '-config');
    const limited = new RedisAclAdapter(
      { url: `redis://${b.host}:${b.port}`, username: name, password: pw },
      { provider: 'test', adopt: false },
    );
    try {
      const login = `hfr_${hex(5)}`;
      logins.push(login);
      const grant = grantFor(login, hex(12));
      await limited.create(grant, within());
      expect(await limited.holds(grant, within())).toEqual({ held: true });
      await limited.remove(login, within());
    } finally {
      await limited.close();
    }
  });

  it('reports a refused admin password as BACKEND_UNAVAILABLE, without the password', async () => {
    const wrong = `wrong-${hex(8)}`;
    const refused = new RedisAclAdapter(
      { url: `redis://${b.host}:${b.port}`, username: 'default', password: wrong },
      { provider: 'test', adopt: false },
    );
    try {
      const error: unknown = await refused.holds(grantFor('hfr_nobody', 'x'), within()).catch((e: unknown) => e);
      expect(isHoldfastError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
      expect((error as Error).message).toMatch(/WRONGPASS/);
      expect((error as Error).message).not.toContain(wrong);
    } finally {
      await refused.close();
    }
  });
});

describe('redis-acl: restarts, a frozen server and the cost of asking', () => {
  let b: OwnedBackend;
  let adapter: RedisAclAdapter;
  let admin: Redis;

  beforeAll(async () => {
    b = await ownBackend('redis');
    adapter = new RedisAclAdapter(adminOf(b), { provider: 'test', adopt: false });
    admin = adminClient(b);
  });
  afterAll(async () => {
    admin.disconnect();
    await adapter.close();
  });

  /** Polls until the adapter answers again after a restart. */
  const answered = async (grant: Grant<RedisAclValues>) => {
    let last: unknown;
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      try {
        const a = await adapter.holds(grant, within(1_000));
        return a.held ? 'held' : a.reason;
      } catch (error) {
        last = error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw last;
  };

  it('forgets its users on a restart without an ACL file, and holds says missing', async () => {
    const grant = grantFor(`hfr_${hex(5)}`, hex(12));
    await adapter.create(grant, within());
    await b.restart();
    admin.disconnect();
    admin = adminClient(b);
    expect(await answered(grant)).toBe('missing');
    expect(await canLogin(b, grant.login, grant.password)).toBe(false);
  });

  it('times out promptly on a frozen server, with DEADLINE_EXCEEDED, and answers again once it thaws', async () => {
    const grant = grantFor(`hfr_${hex(5)}`, hex(12));
    await adapter.create(grant, within());
    await b.pause();
    try {
      for (const call of [() => adapter.holds(grant, within(300)), () => adapter.create(grant, within(300))]) {
        const started = Date.now();
        const error: unknown = await call().catch((e: unknown) => e);
        const took = Date.now() - started;
        expect(isHoldfastError(error, 'DEADLINE_EXCEEDED')).toBe(true);
        expect(took).toBeGreaterThanOrEqual(250);
        expect(took).toBeLessThan(1_000);
      }
    } finally {
      await b.resume();
    }
    expect(await adapter.holds(grant, within(5_000))).toEqual({ held: true });
  });

  it('reads the command table once for 500 consumers, and sends no write to check them', async () => {
    const values = { commands: ['+@read', '+@write', '+@connection', '-@dangerous', '-keys'] };
    const grants = Array.from({ length: 500 }, (_, i) => grantFor(`hfr_many_${i}`, hex(8), values));
    for (let i = 0; i < grants.length; i += 50) {
      await Promise.all(grants.slice(i, i + 50).map((g) => adapter.create(g, within())));
    }
    await adapter.holds(grants[0]!, within()); // the connection's command table, read once
    const reads = adapter.commandTableReads;
    const before = await Promise.all(['acl|setuser', 'acl|deluser', 'command'].map((c) => calls(admin, c)));
    const answers = await Promise.all(grants.map((g) => adapter.holds(g, within(30_000))));
    expect(answers.every((a) => a.held)).toBe(true);
    const after = await Promise.all(['acl|setuser', 'acl|deluser', 'command'].map((c) => calls(admin, c)));
    expect(after.map((a, i) => a.calls - before[i]!.calls)).toEqual([0, 0, 0]);
    expect(adapter.commandTableReads).toBe(reads);
  });

  it('reads the command table again after the server restarted, once', async () => {
    const grant = grantFor(`hfr_${hex(5)}`, hex(12));
    await adapter.create(grant, within());
    expect(await adapter.holds(grant, within())).toEqual({ held: true }); // the table read on this connection
    const reads = adapter.commandTableReads;
    await b.restart();
    admin.disconnect();
    admin = adminClient(b);
    expect(await answered(grant)).toBe('missing');
    await adapter.create(grant, within());
    for (let i = 0; i < 20; i += 1) expect(await adapter.holds(grant, within())).toEqual({ held: true });
    expect(adapter.commandTableReads).toBe(reads + 1);
  });

  it('lists with one ACL USERS, never ACL LIST, and reads the mark of unclaimed logins only', async () => {
    const prefix = `hfl_${hex(3)}_`;
    const grants = Array.from({ length: 40 }, (_, i) => grantFor(`${prefix}${i}`, hex(8)));
    await Promise.all(grants.map((g) => adapter.create(g, within())));
    const byHand = `${prefix}hand`;
    await admin.call('ACL', 'SETUSER', byHand, 'on', '>made-by-hand', '+get');
    const claimed = new Set(grants.slice(1).map((g) => g.login));
    const before = await Promise.all(['acl|users', 'acl|getuser', 'acl|list'].map((c) => calls(admin, c)));
    expect(await adapter.list(prefix, within(), claimed)).toEqual([grants[0]!.login]);
    const after = await Promise.all(['acl|users', 'acl|getuser', 'acl|list'].map((c) => calls(admin, c)));
    expect(after.map((a, i) => a.calls - before[i]!.calls)).toEqual([1, 2, 0]); // the unclaimed one and the one made by hand
    expect((await adapter.list(prefix, within())).sort()).toEqual(grants.map((g) => g.login).sort());
  });
});

describe('redis-acl: a server with an ACL file', () => {
  it('keeps the users holdfast made across a restart, and forgets those it removed', async () => {
    const aclfile = join(testDir('acl'), 'users.acl');
    writeFileSync(aclfile, ''); // redis-server will not start on a missing ACL file
    const b = await ownBackend('redis', { redisArgs: ['--aclfile', aclfile] });
    const adapter = new RedisAclAdapter(adminOf(b), { provider: 'test', adopt: false });
    try {
      const kept = grantFor(`hfr_${hex(5)}`, hex(12));
      const removed = grantFor(`hfr_${hex(5)}`, hex(12));
      await Promise.all([adapter.create(kept, within()), adapter.create(removed, within())]);
      await adapter.remove(removed.login, within());

      await b.restart();

      expect(await canLogin(b, kept.login, kept.password)).toBe(true);
      expect(await canLogin(b, removed.login, removed.password)).toBe(false);
      await expect
        .poll(() => adapter.holds(kept, within(1_000)).catch((e: unknown) => e), { timeout: 10_000, interval: 200 })
        .toEqual({ held: true });
    } finally {
      await adapter.close();
    }
  });
});
