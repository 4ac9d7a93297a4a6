/**
 * What a `postgres-roles` provider lets its consumers ask for: the databases, schemas and
 * group roles named here, nothing else (by default, nothing: a login that can only connect
 * where PUBLIC may). Logins are plain names: letters, digits, `_`, `.`, `-`, 63 bytes at most,
 * not starting with `pg_` (reserved by PostgreSQL).
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { loginShapeProblem } from '../login-shape.js';
import { identifierProblem, identifierSchema, type PostgresRolesValues } from './values.js';

export const postgresRolesPolicySchema = z.strictObject({
  allowedDatabases: z.array(identifierSchema).default([]),
  allowedSchemas: z.array(identifierSchema).default([]),
  allowedRoles: z.array(identifierSchema).default([]),
});

/** A `postgres-roles` provider's policy, defaults applied. */
export type PostgresRolesPolicy = z.infer<typeof postgresRolesPolicySchema>;

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
  const outside = (field: 'databases' | 'schemas' | 'roles', allowed: readonly string[], noun: string) => {
    subject.values[field].forEach((name, i) => {
      if (!allowed.includes(name)) {
        const list = allowed.length === 0 ? 'none' : allowed.map((a) => `"${a}"`).join(', ');
        problems.push(`values.${field}[${i}]: ${noun} "${name}" is not allowed by the provider's policy (allowed: ${list})`);
      }
    });
  };
  outside('databases', policy.allowedDatabases, 'database');
  outside('schemas', policy.allowedSchemas, 'schema');
  outside('roles', policy.allowedRoles, 'role');
  if (subject.values.roles.includes(subject.login)) problems.push(`values.roles: a role cannot be a member of itself ("${subject.login}")`);
  return problems;
}
