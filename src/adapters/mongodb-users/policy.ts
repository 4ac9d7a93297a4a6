/**
 * What a `mongodb-users` provider lets its consumers ask for: databases (templates `{id}` and
 * `{login}` allowed; by default each consumer's own, named after its id) and roles (by
 * default none). FerretDB v1.24 creates users only with `roles: []`: against it, keep
 * `allowedRoles` empty, and the apply of a consumer that asks for a role is refused.
 * Logins are letters, digits, `_`, `.` and `-`.
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { loginShapeProblem } from '../login-shape.js';
import { roleName, type MongodbUsersValues } from './values.js';

/** The databases MongoDB keeps for itself: no consumer's user is made there. */
export const RESERVED_DATABASES: readonly string[] = ['admin', 'local', 'config'];

export const mongodbUsersPolicySchema = z.strictObject({
  allowedDatabases: z.array(z.string().min(1)).default(['{id}']),
  allowedRoles: z.array(roleName).default([]),
});

/** A `mongodb-users` provider's policy, defaults applied. */
export type MongodbUsersPolicy = z.infer<typeof mongodbUsersPolicySchema>;

/** Why `login` cannot be a user holdfast manages, or undefined. */
export const loginProblem = loginShapeProblem;

/** What `subject` asks for beyond `policy`, one sentence per problem naming the field; empty when allowed. */
export function violations(subject: PolicySubject<MongodbUsersValues>, policy: MongodbUsersPolicy): string[] {
  const problems: string[] = [];
  const login = loginProblem(subject.login);
  if (login) problems.push(`login: "${subject.login}" ${login}`);
  const expand = (template: string) => template.replaceAll('{id}', subject.id).replaceAll('{login}', subject.login);
  const databases = policy.allowedDatabases.map(expand);
  const { database, roles } = subject.values;
  if (RESERVED_DATABASES.includes(database)) {
    problems.push(`values.database: "${database}" is MongoDB's own database; a consumer's user lives in its own`);
  } else if (!databases.includes(database)) {
    problems.push(`values.database: "${database}" is not allowed by the provider's policy (allowed: ${databases.map((d) => `"${d}"`).join(', ') || 'none'})`);
  }
  roles.forEach((role, i) => {
    if (!policy.allowedRoles.includes(role)) {
      const allowed = policy.allowedRoles.length === 0 ? 'none' : policy.allowedRoles.map((r) => `"${r}"`).join(', ');
      problems.push(`values.roles[${i}]: role "${role}" is not allowed by the provider's policy (allowed: ${allowed})`);
    }
  });
  return problems;
}
