/**
 * A role as PostgreSQL describes it, read in one catalog query, and its comparison with a
 * grant. Only roles this provider created (marked by a comment, see role-mark.ts) are ever
 * changed or dropped.
 */
import type { HoldsAnswer } from '../adapter.js';
import { setDifference } from './grant-sets.js';
import { notOwnedWords, roleOwner } from './role-mark.js';
import type { PostgresRolesValues } from './values.js';

/** The attributes a consumer's role has: a login, nothing more (its CONNECTION LIMIT is the policy's: connection-limit.ts). */
export const ROLE_ATTRIBUTES = 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT';

/** A role with any of these may do what a consumer's role may not; `r` is the role itself. */
const WITHHELD = (r: string) =>
  `(${r}.rolsuper OR ${r}.rolcreatedb OR ${r}.rolcreaterole OR ${r}.rolreplication OR ${r}.rolbypassrls)`;

/**
 * `$1` is the role's name, `$2` the withheld roles (text[]): the roles it is a member of,
 * directly or through others (`pg_has_role` follows pg_auth_members recursively), that have a
 * withheld attribute (it could `SET ROLE` to them) or are withheld themselves (a predefined role
 * such as `pg_execute_server_program`: it would use its rights). Each is named with why.
 */
export const PRIVILEGED_GROUPS = `ARRAY(SELECT g.rolname::text || ' (' || concat_ws(', ', CASE WHEN g.rolname = ANY($2::text[]) THEN 'withheld role' END,
    CASE WHEN g.rolsuper THEN 'SUPERUSER' END, CASE WHEN g.rolcreatedb THEN 'CREATEDB' END,
    CASE WHEN g.rolcreaterole THEN 'CREATEROLE' END, CASE WHEN g.rolreplication THEN 'REPLICATION' END, CASE WHEN g.rolbypassrls THEN 'BYPASSRLS' END) || ')'
  FROM pg_catalog.pg_roles g WHERE (${WITHHELD('g')} OR g.rolname = ANY($2::text[])) AND g.oid <> r.oid AND pg_has_role(r.oid, g.oid, 'MEMBER') ORDER BY 1)`;

/**
 * `$1` is the role's name, `$2` the withheld roles (text[]). `rolpassword` is the verifier from pg_authid, or
 * `********` from pg_roles. `many`: `$1` is several roles' names (text[]), a row for each that exists.
 */
export function roleQuery(readVerifier: boolean, many = false): string {
  return `SELECT r.rolname::text AS rolname, r.rolcanlogin, coalesce(r.rolvaliduntil <= now(), false) AS expired, r.rolvaliduntil::text AS valid_until, r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolreplication, r.rolbypassrls,
  r.rolconnlimit, r.rolpassword, shobj_description(r.oid, 'pg_authid') AS comment,
  ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid ORDER BY 1) AS member_of,
  ARRAY(SELECT d.datname::text FROM pg_database d, aclexplode(d.datacl) a WHERE a.grantee = r.oid AND a.privilege_type = 'CONNECT' ORDER BY 1) AS databases,
  ARRAY(SELECT n.nspname::text FROM pg_namespace n, aclexplode(n.nspacl) a WHERE a.grantee = r.oid AND a.privilege_type = 'USAGE' ORDER BY 1) AS schemas,
  r.rolinherit,
  ${PRIVILEGED_GROUPS} AS privileged_groups
FROM ${readVerifier ? 'pg_catalog.pg_authid' : 'pg_catalog.pg_roles'} r WHERE r.rolname = ${many ? 'ANY($1::text[])' : '$1'}`;
}

/** One row of {@link roleQuery}. */
export interface RoleRow {
  rolcanlogin: boolean;
  /** VALID UNTIL has passed (the server's clock). */
  expired: boolean;
  valid_until: string | null;
  rolsuper: boolean;
  rolcreatedb: boolean;
  rolcreaterole: boolean;
  rolreplication: boolean;
  rolbypassrls: boolean;
  rolconnlimit: number;
  rolpassword: string | null;
  comment: string | null;
  member_of: string[];
  databases: string[];
  schemas: string[];
  /** INHERIT: it uses its groups' privileges without SET ROLE (what a consumer's role is given). */
  rolinherit: boolean;
  /** Roles with a withheld attribute, or withheld themselves, it is a member of, each as `name (why)`. */
  privileged_groups: string[];
}

/** The attributes a consumer's role must not have, as `ALTER ROLE` spells them. */
const ATTRIBUTE_WORDS = {
  rolsuper: 'SUPERUSER',
  rolcreatedb: 'CREATEDB',
  rolcreaterole: 'CREATEROLE',
  rolreplication: 'REPLICATION',
  rolbypassrls: 'BYPASSRLS',
} as const;

/** Whether the grant's password is the role's, and if not, in words. */
export type PasswordAnswer = { matches: true } | { matches: false; detail: string };

/** Why `row` is not `provider`'s to hold as it is, or undefined when it carries this provider's mark. */
export function ownershipDiffers(row: RoleRow, provider: string): string | undefined {
  const owner = roleOwner(row.comment, provider);
  if (owner.kind === 'ours') return undefined;
  if (owner.kind === 'legacy')
    return `the role carries the bare mark of an older holdfast (no provider); it is re-marked as provider "${provider}"'s on the next apply`;
  return `the role exists but ${notOwnedWords(owner, provider)}; holdfast will not change it`;
}

/**
 * Compares a role with the grant's values, as `provider` sees it (the role must carry its
 * mark). `password` says whether the password was found to match (checked by the caller
 * against the verifier or by logging in). Details name fields and values, never a password
 * or a verifier.
 */
export function compareRole(
  row: RoleRow | null,
  values: PostgresRolesValues,
  password: PasswordAnswer,
  provider: string,
): HoldsAnswer {
  if (row === null) return { held: false, reason: 'missing', detail: 'the backend has no such role' };
  const ownership = ownershipDiffers(row, provider);
  if (ownership) return { held: false, reason: 'rules-differ', detail: ownership };
  if (!row.rolcanlogin) return { held: false, reason: 'disabled', detail: 'the role cannot log in (NOLOGIN)' };
  if (row.expired)
    return {
      held: false,
      reason: 'disabled',
      detail: `the role's password expired at ${row.valid_until ?? '?'} (VALID UNTIL)`,
    };
  if (!password.matches) return { held: false, reason: 'password-differs', detail: password.detail };
  const attributes = Object.entries(ATTRIBUTE_WORDS)
    .filter(([column]) => row[column as keyof typeof ATTRIBUTE_WORDS])
    .map(([, word]) => word);
  if (attributes.length > 0) {
    return {
      held: false,
      reason: 'rules-differ',
      detail: `attributes: the role has ${attributes.join(', ')}; the grant asks for a plain LOGIN role`,
    };
  }
  if (row.privileged_groups.length > 0) {
    return {
      held: false,
      reason: 'rules-differ',
      detail: `attributes: through membership the role may SET ROLE to ${row.privileged_groups.join(', ')} (or use its rights); a consumer's role has none of these`,
    };
  }
  if (row.valid_until !== null && row.valid_until !== 'infinity') {
    const when = `the role's password expires at ${row.valid_until} (VALID UNTIL)`;
    return { held: false, reason: 'rules-differ', detail: `attributes: ${when}; the grant asks for no expiry` };
  }
  if (!row.rolinherit) {
    const groups = "the grant asks for INHERIT (its groups' privileges used without SET ROLE)";
    return { held: false, reason: 'rules-differ', detail: `attributes: the role has NOINHERIT; ${groups}` };
  }
  const roles = setDifference('roles', row.member_of, values.roles);
  if (roles) return { held: false, reason: 'roles-differ', detail: roles };
  const grants = [
    setDifference('databases (CONNECT)', row.databases, values.databases),
    setDifference('schemas (USAGE)', row.schemas, values.schemas),
  ].filter((d): d is string => d !== undefined);
  return grants.length === 0 ? { held: true } : { held: false, reason: 'grants-differ', detail: grants.join('; ') };
}
