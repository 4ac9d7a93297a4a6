/** Logging in as a consumer would, from a fresh connection. */
import { Redis } from 'ioredis';
import { MongoClient, MongoServerError } from 'mongodb';
import pg from 'pg';
import { accessKeyIdOf } from '../../src/adapters/s3-identities/identity.js';
import { S3ErrorReply, S3Requests } from '../../src/adapters/s3-identities/s3-requests.js';

/**
 * Authenticates a fresh Redis connection as `username`: true when accepted, false when the
 * server refuses the password (WRONGPASS); throws when the server cannot be reached.
 */
export async function redisLogin(
  b: { host: string; port: number },
  username: string,
  password: string,
): Promise<boolean> {
  const client = new Redis({
    host: b.host,
    port: b.port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.call('AUTH', username, password);
    return true;
  } catch (error) {
    if (error instanceof Error && /WRONGPASS/.test(error.message)) return false;
    throw error;
  } finally {
    client.disconnect();
  }
}

/**
 * Logs in to PostgreSQL as `username` on a fresh connection (to `database`, default
 * `postgres`): true when authenticated, false when the server refuses the password or the
 * login (28P01, 28000); throws when the server cannot be reached.
 */
export async function postgresLogin(
  b: { host: string; port: number },
  username: string,
  password: string,
  database = 'postgres',
): Promise<boolean> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: username,
    password,
    database,
    connectionTimeoutMillis: 2000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === '28P01' || code === '28000') return false;
    if (code === '42501' || code === '3D000') return true; // authenticated; the database refused
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Authenticates to a MongoDB wire server as `username` (of `authSource`, default `admin`) on a
 * fresh connection: true when accepted, false when refused (AuthenticationFailed, code 18).
 */
export async function mongoLogin(
  b: { host: string; port: number },
  username: string,
  password: string,
  authSource = 'admin',
): Promise<boolean> {
  const client = new MongoClient(`mongodb://${b.host}:${b.port}/`, {
    auth: { username, password },
    authSource,
    serverSelectionTimeoutMS: 2000,
    connectTimeoutMS: 2000,
    maxPoolSize: 1,
  });
  try {
    await client.db(authSource).command({ ping: 1 });
    return true;
  } catch (error) {
    if (error instanceof MongoServerError && error.code === 18) return false;
    if (error instanceof Error && /Authentication failed/i.test(error.message)) return false;
    throw error;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The S3 endpoint without the key pair a test URL carries. */
export const s3Endpoint = (b: { host: string; port: number }): string => `http://${b.host}:${b.port}`;

/**
 * Whether the gateway accepts `login`'s key (derived for `provider`) with `secret`; false on a refused key or
 * signature.
 */
export async function s3Login(
  b: { host: string; port: number },
  provider: string,
  login: string,
  secret: string,
): Promise<boolean> {
  try {
    await new S3Requests(s3Endpoint(b)).listBuckets(
      { accessKeyId: accessKeyIdOf(provider, login), secretAccessKey: secret },
      AbortSignal.timeout(10_000),
    );
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(error.code))
      return false;
    throw error;
  }
}
