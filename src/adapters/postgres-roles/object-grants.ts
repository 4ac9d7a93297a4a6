/**
 * Grants and revokes on databases and schemas: each rewrites the object's catalog row (its ACL), so holdfast's
 * transactions take them one at a time ({@link ACL_ROW_LOCK}, held to the commit). A batch apply
 * (`createMany`) sends its roles' changes of the same object as one statement naming every role
 * (`GRANT CONNECT ON DATABASE "app" TO "a", "b"`), after the roles themselves are written, so the lock is held for
 * a few statements at the end of the transaction rather than from its first role's grant: the roles of other batches
 * (each `CREATE ROLE … PASSWORD` costs the server a PBKDF2, as PostgreSQL checks the verifier is not of an empty
 * password) are written meanwhile.
 */
import type pg from 'pg';

/**
 * The advisory lock (transaction-scoped) every holdfast transaction takes before it grants or
 * revokes on a database or schema: such a grant rewrites the object's catalog row (its ACL), and
 * two transactions doing so at once make PostgreSQL fail one with `tuple concurrently updated`
 * (XX000; measured: 12 of 24 concurrent applies on one database). Waiting for it is bounded by the
 * transaction's `lock_timeout` (the call's deadline). One key for every provider on the server:
 * they share the catalog rows.
 */
export const ACL_ROW_LOCK = 0x686f6c646661; // "holdfa"

/** One role's grant or revoke on one object; `object` and `role` are quoted identifiers already. */
export interface ObjectGrant {
  verb: 'GRANT' | 'REVOKE';
  /** e.g. `CONNECT ON DATABASE "app"`, `USAGE ON SCHEMA "s"`. */
  object: string;
  role: string;
}

/** The statement of one change. */
export function objectStatement({ verb, object, role }: ObjectGrant): string {
  return `${verb} ${object} ${verb === 'GRANT' ? 'TO' : 'FROM'} ${role}`;
}

/** The changes as one statement per verb and object, naming every role it concerns (in the order first seen). */
export function groupedStatements(changes: readonly ObjectGrant[]): string[] {
  const roles = new Map<string, Set<string>>();
  for (const { verb, object, role } of changes) {
    const key = `${verb} ${object}`;
    const set = roles.get(key) ?? new Set<string>();
    set.add(role);
    roles.set(key, set);
  }
  return [...roles].map(([key, names]) => {
    const verb = key.startsWith('GRANT ') ? 'GRANT' : 'REVOKE';
    return `${key} ${verb === 'GRANT' ? 'TO' : 'FROM'} ${[...names].join(', ')}`;
  });
}

/** Takes the ACL row lock for the rest of the transaction (waiting for it is bounded by its `lock_timeout`). */
export async function lockObjectRows(client: pg.PoolClient): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [ACL_ROW_LOCK]);
}
