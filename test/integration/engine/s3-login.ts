/**
 * IAM by hand on a test S3 server, as a person with the admin key would; and (from test/backends/logins.ts) a
 * consumer's signed request.
 */
import { S3Requests } from '../../../src/adapters/s3-identities/s3-requests.js';
import type { BackendEndpoint } from '../../backends/index.js';
import { s3Endpoint } from '../../backends/logins.js';

export { s3Endpoint, s3Login } from '../../backends/logins.js';

/** An IAM action as the admin, by hand (what a person with the admin key would do). */
export function s3ByHand(b: BackendEndpoint, action: string, params: Record<string, string>): Promise<string> {
  return new S3Requests(s3Endpoint(b)).iam(
    { accessKeyId: b.admin.username, secretAccessKey: b.admin.password },
    action,
    params,
    AbortSignal.timeout(10_000),
  );
}
