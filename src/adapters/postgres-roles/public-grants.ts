/**
 * What PostgreSQL lets every login do (`PUBLIC`) beyond a provider's policy, for `holdfast doctor`. By default every
 * database grants `CONNECT` and `TEMPORARY` to `PUBLIC` (and, before PostgreSQL 15, schema `public` grants `CREATE`),
 * so a consumer whose `databases` list is empty still connects to every database and creates temporary tables there:
 * a database list is a boundary only where the operator revoked these. holdfast does not change `PUBLIC` (it is the
 * server's, not a consumer's); it says where it holds what the policy does not allow, and what to revoke.
 *
 * Read-only: catalog reads, on the admin connection's database and, for schemas, on each allowed database.
 */
import type pg from 'pg';

/** `pg_database`: each database that accepts connections where PUBLIC holds CONNECT or TEMPORARY (defaults included). */
const DATABASES = `SELECT d.datname::text AS name, array_agg(a.privilege_type::text ORDER BY a.privilege_type) AS privileges
  FROM pg_catalog.pg_database d, aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) a
  WHERE d.datallowconn AND a.grantee = 0 AND a.privilege_type IN ('CONNECT', 'TEMPORARY')
  GROUP BY d.datname ORDER BY 1`;

/** `pg_namespace` of the connected database: each schema where PUBLIC holds CREATE (not PostgreSQL's own). */
const SCHEMAS = `SELECT n.nspname::text AS name FROM pg_catalog.pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
  WHERE a.grantee = 0 AND a.privilege_type = 'CREATE' AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' ORDER BY 1`;

export interface PublicGrantsScope {
  /** The policy's `allowedDatabases`. */
  allowedDatabases: readonly string[];
  /** Whether the policy allows any schema (consumers' schemas are in the admin connection's database). */
  schemasAllowed: boolean;
  /** The admin connection's database. */
  adminDatabase: string;
}

type Query = Pick<pg.ClientBase, 'query'>;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Each database where PUBLIC holds CONNECT or TEMPORARY and the policy allows none, one sentence each with the fix. */
export async function publicDatabaseGrants(client: Query, scope: PublicGrantsScope): Promise<string[]> {
  const { rows } = await client.query<{ name: string; privileges: string[] }>(DATABASES);
  const allowed = scope.allowedDatabases.length === 0 ? 'none' : scope.allowedDatabases.map(quoted).join(', ');
  return rows
    .filter((row) => !scope.allowedDatabases.includes(row.name))
    .map((row) => {
      const privileges = row.privileges.join(', ');
      const through =
        row.name === scope.adminDatabase && scope.schemasAllowed
          ? `; consumers given schemas there connect through it: add ${quoted(row.name)} to allowedDatabases and to their databases first`
          : '';
      return `PUBLIC holds ${privileges} on database ${quoted(row.name)}, which the policy does not allow (allowedDatabases: ${allowed}): every login, each consumer's included, may connect there${row.privileges.includes('TEMPORARY') ? ' and create temporary tables' : ''}; run REVOKE ${privileges} ON DATABASE ${quoted(row.name)} FROM PUBLIC${through}`;
    });
}

/** Each schema of `database` (the one `client` is connected to) where PUBLIC holds CREATE, one sentence each. */
export async function publicSchemaGrants(client: Query, database: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(SCHEMAS);
  return rows.map(
    ({ name }) =>
      `PUBLIC holds CREATE on schema ${quoted(name)} in database ${quoted(database)}: every login that connects there may create objects in it; run REVOKE CREATE ON SCHEMA ${quoted(name)} FROM PUBLIC in that database`,
  );
}

/** The databases whose schemas are asked about: the allowed ones, and the admin's where consumers' schemas are. */
export function schemaDatabases(scope: PublicGrantsScope): string[] {
  return [...new Set([...(scope.schemasAllowed ? [scope.adminDatabase] : []), ...scope.allowedDatabases])];
}
