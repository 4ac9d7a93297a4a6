/** The `postgres-roles` adapter kind: PostgreSQL login roles, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { postgresRolesPolicySchema, violations, withheldRolesOf, type PostgresRolesPolicy } from './policy.js';
import { PostgresRolesAdapter } from './postgres-roles-adapter.js';
import { postgresRolesValuesSchema, type PostgresRolesValues } from './values.js';

export type { PostgresRolesPolicy } from './policy.js';
export { POWERFUL_PREDEFINED_ROLES, withheldRolesOf } from './policy.js';
export type { PostgresRolesValues } from './values.js';
export { PostgresRolesAdapter } from './postgres-roles-adapter.js';

export const postgresRoles: AdapterKind<PostgresRolesValues, PostgresRolesPolicy> = {
  kind: 'postgres-roles',
  valuesSchema: postgresRolesValuesSchema,
  policySchema: postgresRolesPolicySchema,
  violations,
  // the server is sent a salted SCRAM verifier, scrubbed by each call that knows it: nothing derives from the password alone
  // the admin pool connects as `postgres` when no username is given
  defaultAdminLogin: 'postgres',
  // admin.urls: a primary and its standbys; the adapter writes to the one not in recovery and follows a promotion
  adminUrls: true,
  // a few catalog reads (pg_authid, memberships, grants): a few times the light check's 0.4 ms
  deepCheckCostUs: 2_000,
  // the roles no consumer may reach through a group, checked at every apply and deep check
  connect: (admin, ownership, policy) => new PostgresRolesAdapter(admin, ownership, { withheldRoles: withheldRolesOf(policy) }),
};
