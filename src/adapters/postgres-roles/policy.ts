/**
 * What a `postgres-roles` provider lets its consumers ask for: the databases, schemas and
 * group roles named here, nothing else (by default, nothing: a login that can only connect
 * where PUBLIC may). Logins are plain names: letters, digits, `_`, `.`, `-`, 63 bytes at most,
 * not starting with `pg_` (reserved by PostgreSQL).
 *
 * Some roles are never a consumer's, directly or through any group (recursively): PostgreSQL's
 * predefined roles that reach the server itself or cross tenants ({@link POWERFUL_PREDEFINED_ROLES}),
 * and those the operator names in `withheldRoles`. A policy may not allow one; a consumer may
 * not ask for one (load and worker); the apply refuses a role that would reach one through a
 * group, and the deep check finds one reached later (`rules-differ`).
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { loginShapeProblem } from '../login-shape.js';
import { connectionLimitSchema } from './connection-limit.js';
import { identifierProblem, identifierSchema, type PostgresRolesValues } from './values.js';

/**
 * PostgreSQL's predefined roles a consumer's role never has, directly or through a group: they
 * run programs or read and write files as the server's OS user, read or write every table of
 * every tenant, or cancel and terminate other sessions.
 */
export const POWERFUL_PREDEFINED_ROLES: readonly string[] = [
  'pg_execute_server_program',
  'pg_read_server_files',
  'pg_write_server_files',
  'pg_read_all_data',
  'pg_write_all_data',
  'pg_signal_backend',
];

export const postgresRolesPolicySchema = z
  .strictObject({
    allowedDatabases: z.array(identifierSchema).default([]),
    allowedSchemas: z.array(identifierSchema).default([]),
    allowedRoles: z.array(identifierSchema).default([]),
    /**
     * More roles no consumer's role may reach, directly or through a group, beside {@link POWERFUL_PREDEFINED_ROLES}.
     */
    withheldRoles: z.array(identifierSchema).default([]),
    /** Each consumer's role's CONNECTION LIMIT: applied and compared; the default and why in connection-limit.ts. */
    connectionLimit: connectionLimitSchema,
  })
  .superRefine((policy, ctx) => {
    const withheld = withheldRolesOf(policy);
    policy.allowedRoles.forEach((role, i) => {
      if (withheld.includes(role))
        ctx.addIssue({
          code: 'custom',
          path: ['allowedRoles', i],
          message: `role "${role}" ${withheldWords(role)}; no policy allows it`,
        });
    });
  });

/** A `postgres-roles` provider's policy, defaults applied. */
export type PostgresRolesPolicy = z.infer<typeof postgresRolesPolicySchema>;

/**
 * Every role no consumer's role may reach under `policy`: the powerful predefined ones and the operator's
 * `withheldRoles`.
 */
export function withheldRolesOf(policy: Pick<PostgresRolesPolicy, 'withheldRoles'> | undefined): string[] {
  return [...new Set([...POWERFUL_PREDEFINED_ROLES, ...(policy?.withheldRoles ?? [])])];
}

/** Why `role` is withheld, in words. */
function withheldWords(role: string): string {
  return POWERFUL_PREDEFINED_ROLES.includes(role)
    ? "is a predefined PostgreSQL role that reaches the server or every tenant's data, withheld from every consumer"
    : "is withheld from every consumer by the provider's withheldRoles";
}

/** Why `login` cannot be a role holdfast manages, or undefined. */
export function loginProblem(login: string): string | undefined {
  const problem = identifierProblem(login) ?? loginShapeProblem(login);
  if (problem) return problem;
  if (login.toLowerCase().startsWith('pg_')) return 'starts with "pg_", which PostgreSQL reserves';
  return undefined;
}

/** What `subject` asks for beyond `policy`, one sentence per problem naming the field; empty when allowed. */
export function violations(subject: PolicySubject<PostgresRolesValues>, policy: PostgresRolesPolicy): string[] {
  const problems: string[] = [];
  const login = loginProblem(subject.login);
  if (login) problems.push(`login: "${subject.login}" ${login}`);
  const withheld = withheldRolesOf(policy);
  const outside = (field: 'databases' | 'schemas' | 'roles', allowed: readonly string[], noun: string) => {
    subject.values[field].forEach((name, i) => {
      if (field === 'roles' && withheld.includes(name)) {
        problems.push(`values.roles[${i}]: role "${name}" ${withheldWords(name)}`);
      } else if (!allowed.includes(name)) {
        const list = allowed.length === 0 ? 'none' : allowed.map((a) => `"${a}"`).join(', ');
        problems.push(
          `values.${field}[${i}]: ${noun} "${name}" is not allowed by the provider's policy (allowed: ${list})`,
        );
      }
    });
  };
  outside('databases', policy.allowedDatabases, 'database');
  outside('schemas', policy.allowedSchemas, 'schema');
  outside('roles', policy.allowedRoles, 'role');
  if (subject.values.roles.includes(subject.login))
    problems.push(`values.roles: a role cannot be a member of itself ("${subject.login}")`);
  return problems;
}
