/**
 * The admin connection cut mid-apply, for each adapter, on real servers: a proxy between the
 * adapter and its backend holds back what the apply sends, then resets every connection (as a
 * failover, a restart or a middlebox would). That apply fails as could-not-ask (or its
 * deadline), nothing is thrown out of the process, and the same adapter serves the next calls.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter, AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { postgresRoles } from '../../../src/adapters/postgres-roles/index.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { s3Identities } from '../../../src/adapters/s3-identities/index.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { cuttingProxy } from '../../support/cutting-proxy.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = (ms = 15_000) => ({ signal: AbortSignal.timeout(ms), deadline: Date.now() + ms });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Case {
  /** The shared server's kind. */
  server: 'redis' | 'mongodb' | 'postgres' | 's3';
  connect(admin: AdminConnection, provider: string): Adapter;
  url(address: string): string;
  grant(tag: string): Grant;
}

const cases: Array<[string, Case]> = [
  [
    'redis-acl',
    {
      server: 'redis',
      connect: (admin, provider) => redisAcl.connect(admin, { provider, adopt: false }),
      url: (a) => `redis://${a}`,
      grant: (tag) => {
        const login = `hfcut${tag}_${hex(4)}`;
        return { login, password: hex(12), values: redisAcl.valuesSchema.parse({ keys: [`${login}:*`] }) };
      },
    },
  ],
  [
    'mongodb-users',
    {
      server: 'mongodb',
      connect: (admin, provider) => mongodbUsers.connect(admin, { provider, adopt: false }),
      url: (a) => `mongodb://${a}/?authSource=admin`,
      grant: (tag) => ({
        login: `hfcut${tag}_${hex(4)}`,
        password: hex(12),
        values: mongodbUsers.valuesSchema.parse({ database: `hfcut${tag}` }),
      }),
    },
  ],
  [
    'postgres-roles',
    {
      server: 'postgres',
      connect: (admin, provider) => postgresRoles.connect(admin, { provider, adopt: false }),
      url: (a) => `postgres://${a}/postgres`,
      grant: (tag) => ({
        login: `hfcut${tag}_${hex(4)}`,
        password: hex(12),
        values: postgresRoles.valuesSchema.parse({}),
      }),
    },
  ],
  [
    's3-identities',
    {
      server: 's3',
      connect: (admin, provider) => s3Identities.connect(admin, { provider, adopt: false }),
      url: (a) => `http://${a}`,
      grant: (tag) => {
        const login = `hfcut${tag}-${hex(4)}`;
        return { login, password: hex(12), values: s3Identities.valuesSchema.parse({ buckets: [`${login}-a`] }) };
      },
    },
  ],
];

describe.each(cases)('%s: the admin connection cut mid-apply', (_kind, c) => {
  const b: BackendEndpoint = sharedBackend(c.server);
  const tag = hex(3);
  const provider = `cut${tag}`;
  const admin = (address: string): AdminConnection => ({
    url: c.url(address),
    username: b.admin.username,
    password: b.admin.password,
  });
  const made: string[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  // listened to while this kind's test runs only: a fault of one kind is not counted against another
  beforeAll(() => {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    const direct = c.connect(admin(`${b.host}:${b.port}`), provider);
    for (const login of made) await direct.remove(login, within()).catch(() => undefined);
    await direct.close();
  });

  it('that apply fails as could-not-ask, the process lives, and the next calls are served', async () => {
    const proxy = await cuttingProxy(b.host, b.port);
    const adapter = c.connect(admin(proxy.address), provider);
    try {
      const first = c.grant(tag);
      const second = c.grant(tag);
      made.push(first.login, second.login);
      await adapter.create(first, within());
      expect(await adapter.holds!(first, within())).toEqual({ held: true });

      proxy.stall();
      const applying = adapter.create(second, within(20_000)).catch((e: unknown) => e);
      const end = Date.now() + 10_000;
      while (proxy.held() === 0 && Date.now() < end) await pause(20);
      expect(proxy.held(), 'the apply is on the wire, held back').toBeGreaterThan(0);
      proxy.cut();
      const error = await applying;
      expect(
        isHoldfastError(error, 'BACKEND_UNAVAILABLE') || isHoldfastError(error, 'DEADLINE_EXCEEDED'),
        String(error),
      ).toBe(true);

      // the same adapter serves again once it has a connection (it may say could-not-ask meanwhile)
      const served = Date.now() + 15_000;
      for (;;) {
        const again = await adapter.create(second, within(5_000)).then(
          () => undefined,
          (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
        );
        if (again === undefined) break;
        expect(
          isHoldfastError(again, 'BACKEND_UNAVAILABLE') || isHoldfastError(again, 'DEADLINE_EXCEEDED'),
          again.message,
        ).toBe(true);
        if (Date.now() > served) throw new Error(`not served again within 15 s: ${again.message}`);
        await pause(200);
      }
      expect(await adapter.holds!(second, within())).toEqual({ held: true });
      expect(await adapter.holds!(first, within())).toEqual({ held: true });
      await pause(200);
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      await adapter.close();
      await proxy.close();
    }
  });
});
