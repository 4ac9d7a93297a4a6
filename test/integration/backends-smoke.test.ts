/**
 * Proves the test backends are real servers: logins made on them authenticate, wrong
 * passwords are refused, a Redis restarted without an ACL file forgets its users, and the
 * S3 server answers its admin and comes back empty when recreated on an empty data directory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ownBackend, sharedBackend, type BackendEndpoint } from '../backends/index.js';
import { redisLogin } from '../backends/logins.js';

const pw = () => randomBytes(12).toString('hex');
const name = (prefix: string) => `${prefix}_${randomBytes(4).toString('hex')}`;

function mongoUrl(b: BackendEndpoint, username: string, password: string): string {
  return `mongodb://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${b.host}:${b.port}/?authSource=admin`;
}

async function mongoLogin(b: BackendEndpoint, username: string, password: string): Promise<void> {
  const client = new MongoClient(mongoUrl(b, username, password), { serverSelectionTimeoutMS: 3000 });
  try {
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
}

async function pgLogin(b: BackendEndpoint, user: string, password: string): Promise<void> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 3000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('Redis', () => {
  it('authenticates an ACL user with its password and refuses a wrong one', async () => {
    const b = sharedBackend('redis');
    const admin = new Redis(b.url);
    const user = name('smoke');
    const password = pw();
    try {
      await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, '~smoke:*', '+ping');
      expect(await redisLogin(b, user, password)).toBe(true);
      expect(await redisLogin(b, user, `${password}x`)).toBe(false);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    }
  });

  it('forgets ACL users when restarted without an ACL file, and keeps its admin password', async () => {
    const b = await ownBackend('redis');
    const user = name('forgotten');
    const password = pw();
    const admin = new Redis(b.url, { lazyConnect: true });
    await admin.connect();
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', `>${password}`, '+ping');
    admin.disconnect();
    expect(await redisLogin(b, user, password)).toBe(true);

    await b.restart();

    expect(await redisLogin(b, user, password)).toBe(false);
    expect(await redisLogin(b, 'default', b.admin.password)).toBe(true);
  });

  it('can be paused and resumed: a paused server accepts nothing until resumed', async () => {
    const b = await ownBackend('redis');
    await b.pause();
    const client = new Redis(b.url, {
      lazyConnect: true,
      connectTimeout: 500,
      commandTimeout: 500,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    await expect(client.connect().then(() => client.ping())).rejects.toThrow();
    client.disconnect();
    await b.resume();
    expect(await redisLogin(b, 'default', b.admin.password)).toBe(true);
  });
});

describe('MongoDB wire server', () => {
  it('creates a user who authenticates with SCRAM, refuses a wrong password, and drops it', async () => {
    const b = sharedBackend('mongodb');
    const admin = new MongoClient(b.url);
    const user = name('smoke');
    const password = pw();
    try {
      await admin.db('admin').command({ createUser: user, pwd: password, roles: [] });
      await mongoLogin(b, user, password);
      await expect(mongoLogin(b, user, `${password}x`)).rejects.toThrow(/Authentication failed/);
      await admin.db('admin').command({ dropUser: user });
      await expect(mongoLogin(b, user, password)).rejects.toThrow(/Authentication failed/);
      const info = await admin.db('admin').command({ usersInfo: user });
      expect(info.users).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

describe('PostgreSQL', () => {
  it('logs in as a role created with a password and refuses a wrong one', async () => {
    const b = sharedBackend('postgres');
    const admin = new pg.Client({ connectionString: b.url });
    await admin.connect();
    const role = name('smoke');
    const password = pw();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await pgLogin(b, role, password);
      await expect(pgLogin(b, role, `${password}x`)).rejects.toThrow(/password authentication failed/);
    } finally {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it('restarts keeping its roles, or empty when asked to drop its data', async () => {
    const b = await ownBackend('postgres');
    const role = name('kept');
    const password = pw();
    const admin = new pg.Client({ connectionString: b.url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.end();

    await b.restart();
    await pgLogin(b, role, password);

    await b.restart({ keepData: false });
    await expect(pgLogin(b, role, password)).rejects.toThrow(/password authentication failed/);
    await pgLogin(b, 'postgres', b.admin.password);
  });
});

/**
 * One S3 request as `b`'s admin, signed by curl's own SigV4 (`--aws-sigv4`; curl 7.75 or
 * newer), so this file needs no signing library: the status and the body.
 */
async function s3AsAdmin(
  b: BackendEndpoint,
  method: string,
  path: string,
  secret = b.admin.password,
): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)('curl', [
    '-s',
    '-m',
    '10',
    '-X',
    method,
    '--aws-sigv4',
    'aws:amz:us-east-1:s3',
    '--user',
    `${b.admin.username}:${secret}`,
    '-w',
    '\n%{http_code}',
    `http://${b.host}:${b.port}${path}`,
  ]);
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

async function unsignedGet(b: BackendEndpoint): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://${b.host}:${b.port}/`);
  return { status: res.status, body: await res.text() };
}

describe('S3 server (SeaweedFS)', () => {
  it('has an AWS-shaped admin key pair in its URL, refuses an unsigned request and a wrong secret, and answers its admin', async () => {
    const b = sharedBackend('s3');
    expect(b.admin.username).toMatch(/^[A-Z0-9]{16,20}$/);
    expect(b.admin.password).toHaveLength(40);
    const url = new URL(b.url);
    expect([decodeURIComponent(url.username), decodeURIComponent(url.password), Number(url.port)]).toEqual([
      b.admin.username,
      b.admin.password,
      b.port,
    ]);

    const unsigned = await unsignedGet(b);
    expect(unsigned.status).toBe(403);
    expect(unsigned.body).toMatch(/<Code>(AccessDenied|MissingSecurityHeader)<\/Code>/);
    expect((await s3AsAdmin(b, 'GET', '/', `${b.admin.password.slice(1)}x`)).body).toContain(
      '<Code>SignatureDoesNotMatch</Code>',
    );
    const listed = await s3AsAdmin(b, 'GET', '/');
    expect(listed.status).toBe(200);
    expect(listed.body).toContain('<ListAllMyBucketsResult');
  });

  it('keeps its buckets over a restart, and comes back empty on the same port when recreated on an empty data directory', async () => {
    const b = await ownBackend('s3');
    const bucket = name('smoke').replace('_', '-');
    expect((await s3AsAdmin(b, 'PUT', `/${bucket}`)).status).toBe(200);
    const port = b.port;

    await b.restart();
    expect((await s3AsAdmin(b, 'GET', '/')).body).toContain(`<Name>${bucket}</Name>`);

    await b.restart({ keepData: false });
    expect(b.port).toBe(port);
    const listed = await s3AsAdmin(b, 'GET', '/');
    expect(listed.status).toBe(200);
    expect(listed.body).not.toContain(`<Name>${bucket}</Name>`);
  }, 240_000);

  it('can be paused and resumed: a paused server answers nothing until resumed', async () => {
    const b = await ownBackend('s3');
    await b.pause();
    await expect(fetch(`http://${b.host}:${b.port}/`, { signal: AbortSignal.timeout(1000) })).rejects.toThrow();
    await b.resume();
    expect((await s3AsAdmin(b, 'GET', '/')).status).toBe(200);
  }, 120_000);
});
