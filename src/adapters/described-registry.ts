/**
 * The adapters holdfast has, as configuration reads them, with no driver loaded: for commands
 * that read the configuration and never reach a backend (`holdfast status`), so that they start
 * fast. Their `connect` is never called there; calling it is a programming error, said as such.
 */
import type { AdapterDescription, AdapterKind } from './adapter.js';
import { mongodbUsersDescribed } from './mongodb-users/described.js';
import { postgresRolesDescribed } from './postgres-roles/described.js';
import { redisAclDescribed } from './redis-acl/described.js';
import { s3IdentitiesDescribed } from './s3-identities/described.js';

function withoutDriver(described: AdapterDescription): AdapterKind {
  return {
    ...described,
    connect: () => {
      throw new Error(
        `the ${described.kind} adapter's driver is not loaded by this command: it reads the configuration only`,
      );
    },
  };
}

export const DESCRIBED_ADAPTERS: ReadonlyMap<string, AdapterKind> = new Map(
  [redisAclDescribed, postgresRolesDescribed, mongodbUsersDescribed, s3IdentitiesDescribed].map((d) => [
    d.kind,
    withoutDriver(d),
  ]),
);
