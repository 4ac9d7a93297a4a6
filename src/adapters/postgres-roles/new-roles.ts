/**
 * A batch's roles when none of them exists yet (a first apply, or a server that forgot them all: re-initialised,
 * restored from before they were made), written in one round trip instead of six per role: every `CREATE ROLE` with
 * its verifier, its mark and its memberships, then the batch's grants on databases and schemas, one statement per
 * object under the ACL row lock (object-grants.ts), sent as one simple query in the batch's transaction. Whether any
 * of them could `SET ROLE` to a privileged group is asked in one more. The adapter falls back to one savepoint per role
 * wherever this does not fit (a role exists, a statement fails, a role would be refused), so that each role still gets
 * its own outcome; what is written is the same either way.
 *
 * Measured (test/bench/restart-backends.ts --case postgres): a batch of 32 roles took about 200 round trips, each a
 * turn of both processes on a loaded machine; the server's own PBKDF2 per `CREATE ROLE … PASSWORD` (it checks that the
 * verifier is not of an empty password) is the part left.
 */
import type pg from 'pg';
import { ACL_ROW_LOCK, groupedStatements, type ObjectGrant } from './object-grants.js';
import { PRIVILEGED_GROUPS } from './role-state.js';
import type { PostgresRolesValues } from './values.js';

/** One role to create: its login, its SCRAM verifier, and what it is granted. */
export interface NewRole {
  login: string;
  verifier: string;
  values: Pick<PostgresRolesValues, 'databases' | 'schemas' | 'roles'>;
}

/** What every role of the provider is created with: its attributes and connection limit clause, and its mark. */
export interface NewRoleForm {
  attributes: string;
  mark: string;
}

/** The logins among `logins` that exist now, whoever made them. */
export async function existingRoles(client: pg.PoolClient, logins: readonly string[]): Promise<Set<string>> {
  const { rows } = await client.query<{ rolname: string }>(
    'SELECT rolname FROM pg_catalog.pg_roles WHERE rolname = ANY($1::text[])',
    [logins],
  );
  return new Set(rows.map((r) => r.rolname));
}

/** One role's statements: created, marked, made a member of its groups; its grants on objects added to `objects`. */
function roleStatements(client: pg.PoolClient, role: NewRole, form: NewRoleForm, objects: ObjectGrant[]): string[] {
  const name = client.escapeIdentifier(role.login);
  const id = (n: string) => client.escapeIdentifier(n);
  const { databases, schemas, roles } = role.values;
  objects.push(
    ...databases.map((d): ObjectGrant => ({ verb: 'GRANT', object: `CONNECT ON DATABASE ${id(d)}`, role: name })),
    ...schemas.map((s): ObjectGrant => ({ verb: 'GRANT', object: `USAGE ON SCHEMA ${id(s)}`, role: name })),
  );
  return [
    `CREATE ROLE ${name} WITH ${form.attributes} PASSWORD ${client.escapeLiteral(role.verifier)} VALID UNTIL 'infinity'`,
    `COMMENT ON ROLE ${name} IS ${client.escapeLiteral(form.mark)}`,
    ...roles.map((g) => `GRANT ${id(g)} TO ${name}`),
  ];
}

/** The one text that writes every role of `roles` (none exists yet): a simple query, in the caller's transaction. */
export function newRolesText(client: pg.PoolClient, roles: readonly NewRole[], form: NewRoleForm): string {
  const objects: ObjectGrant[] = [];
  const statements = roles.flatMap((role) => roleStatements(client, role, form, objects));
  if (objects.length > 0) {
    statements.push(`SELECT pg_advisory_xact_lock(${ACL_ROW_LOCK})`, ...groupedStatements(objects));
  }
  return `${statements.join(';\n')};`;
}

/** The logins among `logins` that are members of a role with a right a consumer's role never has (role-state.ts). */
export async function privilegedAmong(
  client: pg.PoolClient,
  logins: readonly string[],
  withheld: readonly string[],
): Promise<string[]> {
  const { rows } = await client.query<{ rolname: string; groups: string[] }>(
    `SELECT r.rolname, ${PRIVILEGED_GROUPS} AS groups FROM pg_catalog.pg_roles r WHERE r.rolname = ANY($1::text[])`,
    [logins, withheld],
  );
  return rows.filter((r) => r.groups.length > 0).map((r) => r.rolname);
}
