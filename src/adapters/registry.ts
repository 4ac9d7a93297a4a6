/** The adapters holdfast has, by the name configuration uses. */
import type { AdapterKind } from './adapter.js';
import { mongodbUsers } from './mongodb-users/index.js';
import { postgresRoles } from './postgres-roles/index.js';
import { redisAcl } from './redis-acl/index.js';
import { s3Identities } from './s3-identities/index.js';

export const ADAPTERS: ReadonlyMap<string, AdapterKind> = new Map<string, AdapterKind>([
  [redisAcl.kind, redisAcl],
  [postgresRoles.kind, postgresRoles],
  [mongodbUsers.kind, mongodbUsers],
  [s3Identities.kind, s3Identities],
]);
