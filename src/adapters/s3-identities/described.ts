/** The `s3-identities` adapter kind as configuration reads it: no driver loaded (see `index.ts` for `connect`). */
import type { AdapterDescription } from '../adapter.js';
import { s3IdentitiesPolicySchema, secretProblem, violations, type S3IdentitiesPolicy } from './policy.js';
import { s3IdentitiesValuesSchema, type S3IdentitiesValues } from './values.js';

export const s3IdentitiesDescribed: AdapterDescription<S3IdentitiesValues, S3IdentitiesPolicy> = {
  kind: 's3-identities',
  valuesSchema: s3IdentitiesValuesSchema,
  policySchema: s3IdentitiesPolicySchema,
  violations,
  // None: the server is sent the secret itself (CreateAccessKey, scrubbed as the secret) and
  // SigV4 signatures keyed by it, which cover a date and a request as well, so no form derives
  // from the secret alone. Response bodies, where CreateAccessKey echoes it, are never kept.
  secretForms: () => [],
  secretProblem,
  // four IAM reads and a signed ListBuckets, each 1.5–2.2 ms of the gateway's time
  deepCheckCostUs: 8_000,
  namespaces: (policy) => [{ noun: 'buckets', field: 'bucketPrefix', template: policy.bucketPrefix }],
};
