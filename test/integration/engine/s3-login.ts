/** A request signed as an `s3-identities` consumer, as the consumer would send it: `ListBuckets` with its derived key id and grant secret. */
import { accessKeyIdOf } from '../../../src/adapters/s3-identities/identity.js';
import { S3ErrorReply, S3Requests } from '../../../src/adapters/s3-identities/s3-requests.js';
import type { BackendEndpoint } from '../../backends/index.js';

/** The S3 endpoint without the key pair a test URL carries. */
export const s3Endpoint = (b: BackendEndpoint): string => `http://${b.host}:${b.port}`;

/** Whether the gateway accepts `login`'s key (derived for `provider`) with `secret`; false on a refused key or signature. */
export async function s3Login(b: BackendEndpoint, provider: string, login: string, secret: string): Promise<boolean> {
  try {
    await new S3Requests(s3Endpoint(b)).listBuckets({ accessKeyId: accessKeyIdOf(provider, login), secretAccessKey: secret }, AbortSignal.timeout(10_000));
    return true;
  } catch (error) {
    if (error instanceof S3ErrorReply && ['InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(error.code)) return false;
    throw error;
  }
}

/** An IAM action as the admin, by hand (what a person with the admin key would do). */
export function s3ByHand(b: BackendEndpoint, action: string, params: Record<string, string>): Promise<string> {
  return new S3Requests(s3Endpoint(b)).iam({ accessKeyId: b.admin.username, secretAccessKey: b.admin.password }, action, params, AbortSignal.timeout(10_000));
}
