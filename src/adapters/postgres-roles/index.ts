/** The `postgres-roles` adapter kind: PostgreSQL login roles, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { postgresRolesDescribed } from './described.js';
import { withheldRolesOf, type PostgresRolesPolicy } from './policy.js';
import { PostgresRolesAdapter } from './postgres-roles-adapter.js';
import type { PostgresRolesValues } from './values.js';

export type { PostgresRolesPolicy } from './policy.js';
export { POWERFUL_PREDEFINED_ROLES, withheldRolesOf } from './policy.js';
export type { PostgresRolesValues } from './values.js';
export { PostgresRolesAdapter } from './postgres-roles-adapter.js';

export const postgresRoles: AdapterKind<PostgresRolesValues, PostgresRolesPolicy> = {
  ...postgresRolesDescribed,
  // the roles no consumer may reach through a group, checked at every apply and deep check; each role's connection
  // limit; what the policy allows, for what PUBLIC holds beyond it (doctor)
  connect: (admin, ownership, policy) =>
    new PostgresRolesAdapter(admin, ownership, {
      withheldRoles: withheldRolesOf(policy),
      connectionLimit: policy?.connectionLimit,
      allowedDatabases: policy?.allowedDatabases,
      schemasAllowed: (policy?.allowedSchemas.length ?? 0) > 0,
    }),
};
