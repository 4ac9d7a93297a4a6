/**
 * How a consumer's IAM user looks on the server: its access key id (derived from provider
 * and login), holdfast's mark (a user tag), and the one inline policy holdfast puts on it.
 */
import { sha256Hex } from '../../secrets/sha256.js';
import type { S3Action, S3IdentitiesValues } from './values.js';

/**
 * `HF` and 30 uppercase hex digits of SHA-256(provider, NUL, login): 32 letters and digits,
 * within SeaweedFS's 4-128; stable, so a create is idempotent, and a secret plays no part.
 */
export function accessKeyIdOf(provider: string, login: string): string {
  return `HF${sha256Hex(`${provider}\u0000${login}`).slice(0, 30).toUpperCase()}`;
}

/**
 * The second key of a rotation's overlap: `HF` and 30 hex digits of SHA-256(provider, NUL,
 * login, NUL, `overlap`). While `rotationOverlap` runs, the new secret is on this key and the
 * old one stays on {@link accessKeyIdOf}'s; when it ends, the new secret moves to the usual key
 * and this one is deleted.
 */
export function overlapKeyIdOf(provider: string, login: string): string {
  return `HF${sha256Hex(`${provider}\u0000${login}\u0000overlap`).slice(0, 30).toUpperCase()}`;
}

/**
 * The user tag that is holdfast's mark; its value is the provider's name. SeaweedFS keeps and returns tags
 * (`ListUserTags`).
 */
export const MARK_TAG = 'holdfast-managed';

/** The name of the inline policy holdfast puts on every user it makes; the only one such a user has. */
export const POLICY_NAME = 'holdfast-grant';

/** The S3 actions each of SeaweedFS's identity actions stands for in a policy document. */
const S3_ACTIONS: Record<S3Action, readonly string[]> = {
  Read: ['s3:GetObject'],
  Write: ['s3:PutObject', 's3:DeleteObject'],
  List: ['s3:ListBucket'],
  Tagging: ['s3:GetObjectTagging', 's3:PutObjectTagging'],
  Admin: ['s3:*'],
};

export interface PolicyDocument {
  Version: '2012-10-17';
  Statement: Array<{ Effect: 'Allow'; Action: string[]; Resource: string[] }>;
}

/**
 * The policy for `values`: one Allow statement, its actions on each bucket and the objects in it; null when it names no
 * bucket.
 */
export function policyDocument(values: S3IdentitiesValues): PolicyDocument | null {
  if (values.buckets.length === 0) return null;
  const actions = [...new Set(values.actions.flatMap((a) => S3_ACTIONS[a]))].sort();
  const resources = [...new Set(values.buckets)].sort().flatMap((b) => [`arn:aws:s3:::${b}`, `arn:aws:s3:::${b}/*`]);
  return { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: actions, Resource: resources }] };
}
