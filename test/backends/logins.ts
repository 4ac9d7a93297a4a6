/** Logging in as a consumer would, from a fresh connection. */
import { Redis } from 'ioredis';

/**
 * Authenticates a fresh Redis connection as `username`: true when accepted, false when the
 * server refuses the password (WRONGPASS); throws when the server cannot be reached.
 */
export async function redisLogin(b: { host: string; port: number }, username: string, password: string): Promise<boolean> {
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
