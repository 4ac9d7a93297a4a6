/**
 * What a `mongodb-users` provider lets its consumers ask for: databases (templates `{id}` and
 * `{login}` allowed; by default each consumer's own, named after its id) and roles (by
 * default none). MongoDB's own databases (`admin`, `local`, `config`, in any case) are never
 * a consumer's, whatever the policy says, and so the built-in roles that exist only in `admin`
 * (`root`, `…AnyDatabase`, `cluster…`, `backup`, …) cannot be allowed; a database's own
 * administrative roles (`dbOwner`, `dbAdmin`, `userAdmin`) only when the policy names them.
 * FerretDB v1.24 creates users only with `roles: []`: against it, keep `allowedRoles` empty,
 * and the apply of a consumer that asks for a role is refused.
 * Logins are letters, digits, `_`, `.` and `-`.
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { loginShapeProblem } from '../login-shape.js';
import { roleName, type MongodbUsersValues } from './values.js';

/** The databases MongoDB keeps for itself: no consumer's user is made there. */
export const RESERVED_DATABASES: readonly string[] = ['admin', 'local', 'config'];

/** Whether `database` is one of MongoDB's own, in any case (`Admin` is refused as `admin`). */
export function isReservedDatabase(database: string): boolean {
  return RESERVED_DATABASES.includes(database.toLowerCase());
}

/**
 * MongoDB's built-in roles that exist only in the `admin` database and act on every database or
 * the cluster. A consumer's roles are in its own database, which is never `admin`: no policy
 * allows these.
 */
export const ADMIN_ONLY_ROLES: readonly string[] = [
  'root',
  'userAdminAnyDatabase',
  'dbAdminAnyDatabase',
  'readWriteAnyDatabase',
  'readAnyDatabase',
  'clusterAdmin',
  'clusterManager',
  'clusterMonitor',
  'hostManager',
  'enableSharding',
  'backup',
  'restore',
  'searchCoordinator',
  'directShardOperations',
  '__system',
  '__queryableBackup',
];

/**
 * The built-in roles of every database that administer it (its users, indexes, profiling): given only where the policy
 * names them.
 */
export const DATABASE_ADMIN_ROLES: readonly string[] = ['dbOwner', 'dbAdmin', 'userAdmin'];

const allowedRole = roleName.refine((role) => !ADMIN_ONLY_ROLES.includes(role), {
  message:
    "is a built-in role of the admin database (it acts on every database or the cluster); no consumer's user is made there, so no policy allows it",
});

export const mongodbUsersPolicySchema = z.strictObject({
  allowedDatabases: z.array(z.string().min(1)).default(['{id}']),
  allowedRoles: z.array(allowedRole).default([]),
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
  if (isReservedDatabase(database)) {
    problems.push(`values.database: "${database}" is MongoDB's own database; a consumer's user lives in its own`);
  } else if (!databases.includes(database)) {
    problems.push(
      `values.database: "${database}" is not allowed by the provider's policy (allowed: ${databases.map((d) => `"${d}"`).join(', ') || 'none'})`,
    );
  }
  roles.forEach((role, i) => {
    if (ADMIN_ONLY_ROLES.includes(role)) {
      problems.push(
        `values.roles[${i}]: role "${role}" is a built-in role of MongoDB's admin database; no consumer's user is given it`,
      );
    } else if (!policy.allowedRoles.includes(role)) {
      const allowed = policy.allowedRoles.length === 0 ? 'none' : policy.allowedRoles.map((r) => `"${r}"`).join(', ');
      const kind = DATABASE_ADMIN_ROLES.includes(role) ? 'administrative role' : 'role';
      problems.push(
        `values.roles[${i}]: ${kind} "${role}" is not allowed by the provider's policy (allowed: ${allowed})`,
      );
    }
  });
  return problems;
}
