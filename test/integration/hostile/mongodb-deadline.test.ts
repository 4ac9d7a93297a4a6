/**
 * A deadline the MongoDB server (FerretDB here) is told: every admin command of a call that
 * says its deadline carries `maxTimeMS`, what is left of it, and the server takes it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AdminConnection } from '../../../src/adapters/adapter.js';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { sharedBackend } from '../../backends/index.js';
import { cuttingProxy, type CuttingProxy } from '../../support/cutting-proxy.js';

const hex = (n: number) => randomBytes(n).toString('hex');

describe('mongodb-users: the deadline said to the server', () => {
  const b = sharedBackend('mongodb');
  const tag = hex(3);
  const proxies: CuttingProxy[] = [];
  afterAll(() => Promise.all(proxies.map((p) => p.close())));

  it('each admin command of a call carries maxTimeMS (at most what is left of the deadline), and FerretDB answers it', async () => {
    const proxy = await cuttingProxy(b.host, b.port);
    proxies.push(proxy);
    const admin: AdminConnection = {
      url: `mongodb://${proxy.address}/?authSource=admin`,
      username: b.admin.username,
      password: b.admin.password,
    };
    const adapter = mongodbUsers.connect(admin, { provider: `dl${tag}`, adopt: false });
    try {
      const grant = {
        login: `hfdl${tag}`,
        password: hex(12),
        values: mongodbUsers.valuesSchema.parse({ database: `hfdl${tag}` }),
      };
      const options = () => ({ signal: AbortSignal.timeout(15_000), deadline: Date.now() + 15_000 });
      await adapter.create(grant, options());
      await adapter.create({ ...grant, password: hex(12) }, options()); // updateUser
      await adapter.create(grant, options());
      expect(await adapter.holds!(grant, options())).toEqual({ held: true });
      await adapter.remove(grant.login, options(), grant.values);
      const wire = proxy.sent();
      for (const command of ['usersInfo', 'updateUser', 'dropUser']) expect(wire).toContain(command);
      // a BSON int32 or double named maxTimeMS follows each of them; counted, not parsed
      const bounded = wire.split('maxTimeMS').length - 1;
      expect(bounded).toBeGreaterThanOrEqual(4);
    } finally {
      await adapter.close();
    }
  });
});
