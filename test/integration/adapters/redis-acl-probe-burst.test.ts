/**
 * A heal's burst of light checks on a fresh probe connection, on a real redis-server: thousands refused (the logins
 * the cache forgot) with a few that pass among them, all begun at once. Before one passes the connection is
 * unauthenticated and Redis closes it when the refusals' replies pile up, so they go a few at a time; once one passed,
 * the rest go together (`src/adapters/redis-acl/probe-line.ts`). Every answer is the server's: no check "could not
 * ask" because the connection was closed under it.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Adapter, AdminConnection, Grant } from '../../../src/adapters/adapter.js';
import { redisAcl, type RedisAclValues } from '../../../src/adapters/redis-acl/index.js';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const within = () => ({ signal: AbortSignal.timeout(30_000) });

function adminOf(b: BackendEndpoint): AdminConnection {
  return { url: `redis://${b.host}:${b.port}`, username: b.admin.username, password: b.admin.password };
}

function grantFor(login: string, password: string): Grant<RedisAclValues> {
  return { login, password, values: redisAcl.valuesSchema.parse({ keys: [`${login}:*`], channels: [] }) };
}

describe('redis-acl: a burst of light checks on a fresh probe connection', () => {
  let b: BackendEndpoint;
  let admin: Redis;
  const held: Array<Grant<RedisAclValues>> = [];

  beforeAll(async () => {
    b = sharedBackend('redis');
    admin = new Redis(b.url, { maxRetriesPerRequest: 0 });
    const maker = redisAcl.connect(adminOf(b), { provider: 'burst', adopt: false });
    try {
      for (let i = 0; i < 5; i += 1) {
        const grant = grantFor(`burst_${hex(4)}`, hex(12));
        await maker.create(grant, within());
        held.push(grant);
      }
    } finally {
      await maker.close();
    }
  });

  afterAll(() => admin.disconnect());

  it('answers every check, refused or not, and none could not ask', async () => {
    // a fresh adapter: its probe connection has not authenticated yet
    const adapter: Adapter<RedisAclValues> = redisAcl.connect(adminOf(b), { provider: 'burst', adopt: false });
    try {
      await adapter.ping!(within());
      const forgotten = Array.from({ length: 3_000 }, (_, i) => grantFor(`burst_gone_${i}`, hex(12)));
      // the ones that pass come among the first hundred: what follows them is asked with the bound lifted
      const asked = [...forgotten.slice(0, 100), ...held, ...forgotten.slice(100)];
      const answers = await Promise.all(
        asked.map((g) =>
          adapter.authenticates!(g, within()).then(
            (ok) => (ok ? 'passes' : 'refused'),
            (error: unknown) => `could not ask: ${String(error)}`,
          ),
        ),
      );
      const expected = asked.map((g) => (held.includes(g) ? 'passes' : 'refused'));
      expect(answers.filter((a) => a.startsWith('could not ask')).slice(0, 3)).toEqual([]);
      expect(answers).toEqual(expected);
      // the connection outlived the burst: it answers the next check at once
      expect(await adapter.authenticates!(held[0]!, within())).toBe(true);
    } finally {
      await adapter.close();
    }
  }, 60_000);
});
