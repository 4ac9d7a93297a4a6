/**
 * What an `s3-identities` provider lets its consumers ask for, and the pure checks of a
 * consumer and of a grant secret against it. `bucketPrefix` may use `{id}` and `{login}`.
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { separatorProblems, templateProblem } from '../name-templates.js';
import { ACTIONS, DEFAULT_ACTIONS, type S3Action, type S3IdentitiesValues } from './values.js';

/** SeaweedFS refuses a secret key outside 8-128 characters. */
export const MAX_SECRET_LENGTH = 128;
export const MIN_SECRET_LENGTH = 8;

const allowedAction = z.enum(ACTIONS).refine((a) => a !== 'Admin', 'use allowAdmin to allow "Admin"');

export const s3IdentitiesPolicySchema = z.strictObject({
  /**
   * Every bucket pattern starts with this (after `{id}`/`{login}`); literal, no `*`. Bucket
   * names hold no character ids cannot, so the separator after `{id}` (`-` by default) is one
   * this provider's ids may not hold (`name-templates.ts`): `{id}.` keeps ids with `-`.
   */
  bucketPrefix: z
    .string()
    .min(1, 'a bucket prefix may not be empty')
    .regex(/^[a-z0-9{}.-]+$/, 'a bucket prefix holds lowercase letters, digits, . - and the templates {id} and {login}')
    .superRefine((template, ctx) => {
      const problem = templateProblem(template);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default('{id}-'),
  allowedActions: z
    .array(allowedAction)
    .default(() => [...DEFAULT_ACTIONS, 'Tagging'] as Array<Exclude<S3Action, 'Admin'>>),
  allowAdmin: z.boolean().default(false),
});

/** An `s3-identities` provider's policy, defaults applied. */
export type S3IdentitiesPolicy = z.infer<typeof s3IdentitiesPolicySchema>;

/** What `subject` asks for beyond `policy`, one sentence per problem naming the field; empty when allowed. */
export function violations(subject: PolicySubject<S3IdentitiesValues>, policy: S3IdentitiesPolicy): string[] {
  const literal = policy.bucketPrefix.replaceAll('{id}', subject.id).replaceAll('{login}', subject.login);
  const problems: string[] = separatorProblems('bucketPrefix', policy.bucketPrefix, subject);
  subject.values.buckets.forEach((bucket, i) => {
    if (!bucket.startsWith(literal) || bucket.length === literal.length) {
      problems.push(
        `values.buckets[${i}]: "${bucket}" is outside the bucket prefix "${literal}" allowed by the provider's policy`,
      );
    }
  });
  const allowed = new Set<string>(policy.allowedActions);
  if (policy.allowAdmin) allowed.add('Admin');
  subject.values.actions.forEach((action, i) => {
    if (allowed.has(action)) return;
    problems.push(
      action === 'Admin'
        ? `values.actions[${i}]: "Admin" is refused: the provider's policy does not set allowAdmin`
        : `values.actions[${i}]: "${action}" is not among the actions allowed by the provider's policy (${[...allowed].join(', ')})`,
    );
  });
  return problems;
}

/**
 * Why SeaweedFS would refuse `secret` as a secret key, naming the field; undefined when it takes it. Never quotes the
 * secret.
 */
export function secretProblem(secret: string): string | undefined {
  if (secret.length > MAX_SECRET_LENGTH) {
    return `holds ${secret.length} characters; an S3 secret key holds at most ${MAX_SECRET_LENGTH}`;
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    return `holds ${secret.length} characters; an S3 secret key holds at least ${MIN_SECRET_LENGTH}`;
  }
  return undefined;
}
