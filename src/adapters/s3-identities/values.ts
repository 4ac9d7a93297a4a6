/**
 * What a consumer of an `s3-identities` provider asks for: bucket name patterns (a literal
 * name, or a name ending in `*`) and SeaweedFS's actions on them. Buckets are named, never
 * made: holdfast neither creates nor deletes one.
 */
import { z } from 'zod';
import { boundedList, type ListBound } from '../value-bounds.js';

/** SeaweedFS's identity actions; `Admin` is everything on the bucket, and only a policy's `allowAdmin` allows it. */
export const ACTIONS = ['Read', 'Write', 'List', 'Tagging', 'Admin'] as const;
export type S3Action = (typeof ACTIONS)[number];

export const DEFAULT_ACTIONS: readonly S3Action[] = ['Read', 'Write', 'List'];

/** S3 bucket names: 3-63 lowercase letters, digits, `.` and `-`; a pattern may end in `*`. */
export const BUCKET_PATTERN = /^(?:[a-z0-9][a-z0-9.-]{2,62}|[a-z0-9][a-z0-9.-]{0,61}\*)$/;

const bucketPattern = z
  .string()
  .regex(
    BUCKET_PATTERN,
    'a bucket pattern is an S3 bucket name (3-63 lowercase letters, digits, . and -), optionally ending in *',
  );

/** What one consumer may ask for, at most: each bucket pattern is two resources of its identity. */
export const S3_IDENTITIES_BOUNDS = {
  buckets: { maxItems: 64, maxBytes: 4 * 1024, noun: 'bucket patterns' },
  actions: { maxItems: ACTIONS.length, maxBytes: 256, noun: 'actions' },
} as const satisfies Record<string, ListBound>;

export const s3IdentitiesValuesSchema = z.strictObject({
  buckets: boundedList(bucketPattern, S3_IDENTITIES_BOUNDS.buckets).default([]),
  actions: boundedList(z.enum(ACTIONS), S3_IDENTITIES_BOUNDS.actions)
    .refine((actions) => actions.length > 0, 'at least one action')
    .default([...DEFAULT_ACTIONS]),
});

/** A consumer's values on an `s3-identities` provider, defaults applied. */
export type S3IdentitiesValues = z.infer<typeof s3IdentitiesValuesSchema>;
