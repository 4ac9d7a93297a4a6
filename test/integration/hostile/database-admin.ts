/**
 * What a person with the admin password does by hand on the shared PostgreSQL and MongoDB wire server, for the hostile
 * tests.
 */
import { MongoClient, type Document } from 'mongodb';
import pg from 'pg';
import type { AdminConnection } from '../../../src/adapters/adapter.js';
import type { BackendEndpoint } from '../../backends/index.js';

export function postgresAdminOf(b: BackendEndpoint, more: Partial<AdminConnection> = {}): AdminConnection {
  return {
    url: `postgres://${b.host}:${b.port}/postgres`,
    username: b.admin.username,
    password: b.admin.password,
    ...more,
  };
}

export function mongoAdminOf(b: BackendEndpoint): AdminConnection {
  return {
    url: `mongodb://${b.host}:${b.port}/?authSource=admin`,
    username: b.admin.username,
    password: b.admin.password,
  };
}

/** Runs one statement as the PostgreSQL admin; its rows. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  b: BackendEndpoint,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({
    host: b.host,
    port: b.port,
    user: b.admin.username,
    password: b.admin.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** A role's comment and the attributes a consumer's role never has. */
export async function roleAsSeen(b: BackendEndpoint, role: string) {
  const [row] = await sql<{
    comment: string | null;
    rolsuper: boolean;
    rolcreaterole: boolean;
    rolcreatedb: boolean;
    rolreplication: boolean;
    rolbypassrls: boolean;
  }>(
    b,
    "SELECT shobj_description(oid, 'pg_authid') AS comment, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = $1",
    [role],
  );
  return row;
}

/** Runs one command as the MongoDB admin in `database`. */
export async function mongoCommand(b: BackendEndpoint, database: string, command: Document): Promise<Document> {
  const client = new MongoClient(b.url);
  try {
    return await client.db(database).command(command);
  } finally {
    await client.close();
  }
}
