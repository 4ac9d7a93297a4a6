import { describe, expect, it } from 'vitest';
import { postgresRoles } from '../../../src/adapters/postgres-roles/index.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { reservedLogins } from '../../../src/config/reserved-logins.js';

describe('reservedLogins', () => {
  it("reserves the provider's admin, the queue's and the store's users and `default`, each with why", () => {
    const { logins, reasons } = reservedLogins({
      provider: { name: 'cache', adapter: redisAcl, admin: { username: 'cache-admin' } },
      queueUsername: 'queue-user',
      storeUsername: 'store-admin',
    });
    expect(logins).toEqual(['cache-admin', 'queue-user', 'store-admin', 'default']);
    expect(reasons.get('cache-admin')).toBe('is the admin login of provider cache');
    expect(reasons.get('queue-user')).toBe("is the login of holdfast's queue (queue.username)");
    expect(reasons.get('store-admin')).toBe("is the login of holdfast's record store (store.username)");
  });

  it('reserves the login the adapter connects as when the admin names none (Redis: default, PostgreSQL: postgres)', () => {
    const redis = reservedLogins({ provider: { name: 'cache', adapter: redisAcl, admin: {} } });
    expect(redis.logins).toEqual(['default']);
    expect(redis.reasons.get('default')).toBe('is the login provider cache connects as (its admin names no username)');
    const postgres = reservedLogins({ provider: { name: 'ledger', adapter: postgresRoles, admin: {} } });
    expect(postgres.logins).toEqual(['postgres', 'default']);
    // MongoDB without a username does not authenticate: no login to reserve
    expect(reservedLogins({ provider: { name: 'catalog', adapter: mongodbUsers, admin: {} } }).logins).toEqual([
      'default',
    ]);
  });

  it('keeps the first reason of a login named twice (the admin is also the queue user)', () => {
    const { logins, reasons } = reservedLogins({
      provider: { name: 'cache', adapter: redisAcl, admin: { username: 'default' } },
      queueUsername: 'default',
    });
    expect(logins).toEqual(['default']);
    expect(reasons.get('default')).toBe('is the admin login of provider cache');
  });
});
