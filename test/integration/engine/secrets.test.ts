/**
 * No grant password reaches a log line, a record, a job's data or an HTTP response (the dashboard, Bull Board's API,
 * /status, /metrics): searched, not assumed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import type { Engine } from '../../../src/engine/engine.js';
import {
  engineFixtures as fixtures,
  sharedOf,
  type Consumer,
  type EngineFixture,
  type ProviderKindName,
} from './engine-fixture.js';
import { LeakyAdapter } from './test-adapters.js';

/** Every value under the queue's prefix, whatever its type. */
async function dumpRedis(redis: Redis, prefix: string): Promise<string> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'hash'
          ? await redis.hgetall(key)
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'zset'
              ? await redis.zrange(key, 0, -1, 'WITHSCORES')
              : type === 'set'
                ? await redis.smembers(key)
                : type === 'stream'
                  ? await redis.xrange(key, '-', '+')
                  : type === 'string'
                    ? await redis.get(key)
                    : null;
      out.push(key, JSON.stringify(value));
    }
  } while (cursor !== '0');
  return out.join('\n');
}

async function dumpMongo(url: string, database: string): Promise<string> {
  const client = new MongoClient(url);
  try {
    const db = client.db(database);
    const out: string[] = [];
    for (const { name } of await db.listCollections().toArray()) {
      out.push(name, JSON.stringify(await db.collection(name).find({}).toArray()));
    }
    return out.join('\n');
  } finally {
    await client.close();
  }
}

describe('secrets', () => {
  const fixture = fixtures();

  it('never appear in logs, records or job data, even when a driver error echoes one', async () => {
    const queue = sharedBackend('redis');
    const store = sharedBackend('mongodb');
    const f = await fixture({
      queue,
      store,
      consumers: 8,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const metrics = new Metrics();
    const engine = await f.start(
      undefined,
      new LeakyAdapter(redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!))),
      { metrics },
    );
    await f.until('every consumer held', () => f.allHeld());
    // a hand-dropped login: lost, re-applied, logged
    const admin = new Redis(sharedBackend('redis').url);
    await admin.call('ACL', 'DELUSER', f.consumers[0]!.login);
    admin.disconnect();
    await f.until('healed', async () => (await f.canLogin(f.consumers[0]!)) && (await f.allHeld()));

    // a wait handed to the queue as a wait job (what a round does when a wait's run fails), for Bull Board to list
    // with its ticket
    await f.delayedWaitJob(f.consumers[0]!.key);

    const forms = (password: string) => [password, createHash('sha256').update(password).digest('hex')];
    const logs = f.rawLog.join('\n');
    const redis = new Redis(queue.url);
    const jobs = await dumpRedis(redis, f.config.queue.prefix);
    redis.disconnect();
    const records = await dumpMongo(store.url, f.config.store.database);
    const server = await f.httpServer(engine, metrics);
    const paths = [
      '/',
      '/status?all=1',
      '/healthz',
      '/metrics',
      ...f.consumers.map((c) => `/consumer?key=${encodeURIComponent(c.key)}`),
      '/queues/api/queues',
      ...['latest', 'delayed', 'waiting', 'active', 'completed', 'failed'].map(
        (status) => `/queues/api/queues?activeQueue=${f.config.queue.name}&status=${status}&page=1&jobsPerPage=100`,
      ),
    ];
    const served = (
      await Promise.all(paths.map(async (path) => `${path}\n${await (await fetch(`${server.url}${path}`)).text()}`))
    ).join('\n');
    await server.close();
    expect(served).toContain(`${f.consumers[0]!.key} wait verify`); // Bull Board's API lists the jobs
    expect(jobs).toMatch(/\\"wait\\":\\"verify\\"/); // the due set's waits, with their tickets, are searched too

    // the searches can find what they look for: every grant file holds its password
    for (const c of f.consumers) expect(readFileSync(c.secretPath, 'utf8')).toContain(c.password);
    expect(jobs).toContain(f.consumers[0]!.key);
    expect(records).toContain(f.consumers[0]!.login);
    // the leak happened and was scrubbed
    expect(logs).toContain(
      "apply failed (ERR Error in ACL SETUSER modifier '>[redacted]': Syntax error: password was [redacted])",
    );
    expect(records).toContain('[redacted]');

    for (const c of f.consumers) {
      for (const form of forms(c.password)) {
        expect(logs.includes(form), `log mentions ${c.key}'s password`).toBe(false);
        expect(jobs.includes(form), `job data mentions ${c.key}'s password`).toBe(false);
        expect(records.includes(form), `records mention ${c.key}'s password`).toBe(false);
        expect(served.includes(form), `an HTTP response mentions ${c.key}'s password`).toBe(false);
      }
    }
    for (const secret of [queue.admin.password, store.admin.password]) {
      expect(logs.includes(secret)).toBe(false);
      expect(records.includes(secret)).toBe(false);
      expect(served.includes(secret)).toBe(false);
    }
  });
});

/**
 * The bodies of the read-only HTTP server's pages (dashboard, status, metrics, each consumer, Bull Board's API), each
 * after its path.
 */
async function servedBodies(engine: Engine, f: EngineFixture): Promise<string> {
  const server = await f.httpServer(engine, new Metrics());
  try {
    const paths = [
      '/',
      '/status?all=1',
      '/metrics',
      ...f.consumers.map((c) => `/consumer?key=${encodeURIComponent(c.key)}`),
      ...['latest', 'delayed', 'waiting', 'active', 'completed', 'failed'].map(
        (status) => `/queues/api/queues?activeQueue=${f.config.queue.name}&status=${status}&page=1&jobsPerPage=100`,
      ),
    ];
    return (
      await Promise.all(paths.map(async (path) => `${path}\n${await (await fetch(`${server.url}${path}`)).text()}`))
    ).join('\n');
  } finally {
    await server.close();
  }
}

/** The forms a salted SCRAM credential takes: its keys in base64 and hex, and a PostgreSQL verifier whole. */
function keyForms(storedKey: string, serverKey: string): string[] {
  return [storedKey, serverKey].flatMap((k) => [k, Buffer.from(k, 'base64').toString('hex')]);
}

/** Every derived form of each consumer's password the backend keeps now: what a leak would look like. */
const derivedForms: Record<
  Exclude<ProviderKindName, 'redis-acl'>,
  (b: BackendEndpoint, tag: string, consumers: Consumer[]) => Promise<Map<string, string[]>>
> = {
  'postgres-roles': async (b, _tag, consumers) => {
    const client = new pg.Client({
      host: b.host,
      port: b.port,
      user: b.admin.username,
      password: b.admin.password,
      database: 'postgres',
    });
    await client.connect();
    try {
      const forms = new Map<string, string[]>();
      for (const c of consumers) {
        const { rows } = await client.query<{ rolpassword: string }>(
          'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
          [c.login],
        );
        const verifier = rows[0]?.rolpassword ?? '';
        const match = /^SCRAM-SHA-256\$\d+:[^$]+\$([^:]+):(.+)$/.exec(verifier);
        expect(match, `${c.login} has a SCRAM verifier`).not.toBeNull();
        forms.set(c.key, [verifier, ...keyForms(match![1]!, match![2]!)]);
      }
      return forms;
    } finally {
      await client.end();
    }
  },
  // the server keeps the secret itself (searched already); SigV4 signatures cover a date and a request, so no form
  // derives from it alone
  's3-identities': () => Promise.resolve(new Map()),
  'mongodb-users': async (b, tag, consumers) => {
    const client = new MongoClient(b.url);
    try {
      const forms = new Map<string, string[]>();
      for (const c of consumers) {
        const reply = (await client.db(`hfu${tag}`).command({ usersInfo: c.login, showCredentials: true })) as {
          users: Array<{ credentials?: Record<string, { storedKey: string; serverKey: string }> }>;
        };
        const credentials = Object.values(reply.users[0]?.credentials ?? {});
        expect(credentials.length, `${c.login} shows its credentials`).toBeGreaterThan(0);
        forms.set(
          c.key,
          credentials.flatMap((k) => keyForms(k.storedKey, k.serverKey)),
        );
      }
      return forms;
    } finally {
      await client.close();
    }
  },
};

describe.each(['postgres-roles', 'mongodb-users', 's3-identities'] as const)('secrets on a %s provider', (kind) => {
  const fixture = fixtures();

  it('neither the password nor the verifier or SCRAM keys derived from it appear in logs, records, job data or HTTP responses', async () => {
    const queue = sharedBackend('redis');
    const store = sharedBackend('mongodb');
    const provider = sharedOf(kind);
    const f = await fixture({
      adapterKind: kind,
      provider,
      queue,
      store,
      consumers: 4,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const engine = await f.startHeld();
    // a rotated secret: applied again, checked light and deep
    const [rotated] = f.consumers as [Consumer];
    rotated.password = randomBytes(18).toString('base64url');
    writeFileSync(rotated.secretPath, `${rotated.password}\n`, { mode: 0o600 });
    await f.until('the rotated secret logs in', () => f.canLogin(rotated));
    await f.until('every consumer held', () => f.allHeld());

    const forms = await derivedForms[kind](provider, f.tag, f.consumers);
    const logs = f.rawLog.join('\n');
    const redis = new Redis(queue.url);
    const jobs = await dumpRedis(redis, f.config.queue.prefix);
    redis.disconnect();
    const records = await dumpMongo(store.url, f.config.store.database);
    expect(jobs).toContain(rotated.key);
    expect(records).toContain(rotated.login);
    expect(logs).toContain(rotated.key);
    const served = await servedBodies(engine, f);
    expect(served).toContain(rotated.key);

    for (const c of f.consumers) {
      for (const form of [
        c.password,
        createHash('sha256').update(c.password).digest('hex'),
        ...(forms.get(c.key) ?? []),
      ]) {
        expect(served.includes(form), `an HTTP response mentions a form of ${c.key}'s password`).toBe(false);
        expect(logs.includes(form), `log mentions a form of ${c.key}'s password`).toBe(false);
        expect(jobs.includes(form), `job data mentions a form of ${c.key}'s password`).toBe(false);
        expect(records.includes(form), `records mention a form of ${c.key}'s password`).toBe(false);
      }
    }
  });
});
