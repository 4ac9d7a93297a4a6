/** The `postgres-roles` adapter kind as configuration reads it: no driver loaded (see `index.ts` for `connect`). */
import type { AdapterDescription } from '../adapter.js';
import { postgresRolesPolicySchema, violations, type PostgresRolesPolicy } from './policy.js';
import { postgresRolesValuesSchema, type PostgresRolesValues } from './values.js';

export const postgresRolesDescribed: AdapterDescription<PostgresRolesValues, PostgresRolesPolicy> = {
  kind: 'postgres-roles',
  valuesSchema: postgresRolesValuesSchema,
  policySchema: postgresRolesPolicySchema,
  violations,
  // the server is sent a salted SCRAM verifier, scrubbed by each call that knows it: nothing derives from the password
  // alone
  // the admin pool connects as `postgres` when no username is given
  defaultAdminLogin: 'postgres',
  // admin.urls: a primary and its standbys; the adapter writes to the one not in recovery and follows a promotion
  adminUrls: true,
  // a few catalog reads (pg_authid, memberships, grants): a few times the light check's 0.4 ms
  deepCheckCostUs: 2_000,
};
