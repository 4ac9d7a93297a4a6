/**
 * A role's own settings (`ALTER ROLE … SET work_mem = '1GB'`, `ALTER ROLE … IN DATABASE … SET …`): session defaults a
 * login may give itself, kept by PostgreSQL in `pg_db_role_setting` (`pg_roles.rolconfig` is its row for every
 * database). A consumer's grant asks for none, so the deep check finds any (`rules-differ`, naming the setting and
 * where, never its value) and every apply resets them all, everywhere.
 */
import type pg from 'pg';
import type { HoldsAnswer } from '../adapter.js';

/**
 * The settings of the role named by `role` (an SQL expression: `$1`, or a column; found by `to_regrole`, one cache
 * lookup: `pg_roles` is a view that joins `pg_db_role_setting` itself), as `name` (every database) or
 * `name in database "db"`, its value left out.
 */
const settingsOf = (
  role: string,
) => `ARRAY(SELECT split_part(c, '=', 1) || CASE WHEN s.setdatabase = 0 THEN '' ELSE ' in database ' || quote_ident(coalesce(d.datname, s.setdatabase::text)) END
  FROM pg_catalog.pg_db_role_setting s LEFT JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) c
  WHERE s.setrole = to_regrole(quote_ident(${role})) ORDER BY s.setdatabase <> 0, d.datname, 1)`;

/**
 * `query` (whose `$1` is the role's name; `many`: whose rows name theirs, `rolname`) with one more column, `settings`:
 * the role's settings, in words.
 */
export function withRoleSettings(query: string, many = false): string {
  return `SELECT role_state.*, ${settingsOf(many ? 'role_state.rolname' : '$1')} AS settings FROM (${query}) AS role_state`;
}

/** Not held (`rules-differ`) when the role has a setting of its own; undefined when it has none. */
export function roleSettingsDiffer(settings: readonly string[]): HoldsAnswer | undefined {
  if (settings.length === 0) return undefined;
  return {
    held: false,
    reason: 'rules-differ',
    detail: `settings: the role has ${settings.join(', ')} of its own (ALTER ROLE … SET); the grant asks for none`,
  };
}

/** Resets every setting of `login` (which exists), for every database and in each: a no-op when it has none. */
export async function resetRoleSettings(client: pg.PoolClient, login: string): Promise<void> {
  const { rows } = await client.query<{ datname: string | null }>(
    `SELECT d.datname FROM pg_catalog.pg_db_role_setting s LEFT JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase
      WHERE s.setrole = to_regrole(quote_ident($1)) ORDER BY 1 NULLS FIRST`,
    [login],
  );
  const role = client.escapeIdentifier(login);
  for (const { datname } of rows)
    await client.query(
      datname === null
        ? `ALTER ROLE ${role} RESET ALL`
        : `ALTER ROLE ${role} IN DATABASE ${client.escapeIdentifier(datname)} RESET ALL`,
    );
}
