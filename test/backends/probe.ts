/** Asks a backend, with its admin credentials, whether it answers. */
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { probeS3 } from './seaweedfs.js';
import type { BackendEndpoint } from './types.js';

export async function probe(endpoint: BackendEndpoint, timeoutMs = 2000): Promise<void> {
  switch (endpoint.kind) {
    case 'redis': {
      const client = new Redis(endpoint.url, {
        lazyConnect: true,
        connectTimeout: timeoutMs,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
      return;
    }
    case 'mongodb': {
      const client = new MongoClient(endpoint.url, {
        serverSelectionTimeoutMS: timeoutMs,
        connectTimeoutMS: timeoutMs,
      });
      try {
        await client.db('admin').command({ ping: 1 });
      } finally {
        await client.close();
      }
      return;
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: endpoint.url, connectionTimeoutMillis: timeoutMs });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => undefined);
      }
      return;
    }
    case 's3':
      await probeS3(endpoint.host, endpoint.port, timeoutMs);
      return;
  }
}

/** Probes until the backend answers, `stillStarting` says no, or the deadline passes. */
export async function waitUntilReady(
  endpoint: BackendEndpoint,
  options: { timeoutMs?: number; stillStarting?: () => boolean; describeFailure?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      await probe(endpoint);
      return;
    } catch (error) {
      last = error;
    }
    const starting = options.stillStarting?.() ?? true;
    if (!starting || Date.now() > deadline) {
      const why = last instanceof Error ? last.message : String(last);
      const detail = options.describeFailure?.() ?? '';
      throw new Error(
        `${endpoint.kind} on ${endpoint.host}:${endpoint.port} did not become ready (${starting ? 'timed out' : 'process exited'}): ${why}${detail ? `\n${detail}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
