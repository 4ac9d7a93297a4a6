/** The `s3-identities` adapter kind: IAM users with a chosen access key on an S3 server (SeaweedFS). */
import type { AdapterKind } from '../adapter.js';
import { s3IdentitiesDescribed } from './described.js';
import type { S3IdentitiesPolicy } from './policy.js';
import { S3IdentitiesAdapter } from './s3-identities-adapter.js';
import type { S3IdentitiesValues } from './values.js';

export type { S3IdentitiesPolicy } from './policy.js';
export type { S3IdentitiesValues } from './values.js';
export { S3IdentitiesAdapter } from './s3-identities-adapter.js';

export const s3Identities: AdapterKind<S3IdentitiesValues, S3IdentitiesPolicy> = {
  ...s3IdentitiesDescribed,
  // the admin is named by its access key id
  connect: (admin, ownership) => new S3IdentitiesAdapter(admin, ownership),
};
