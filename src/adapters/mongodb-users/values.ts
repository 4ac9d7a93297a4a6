/**
 * What a consumer of a `mongodb-users` provider asks for: the database its user lives in (the
 * `authSource` it authenticates against) and the roles it has there.
 */
import { z } from 'zod';

/** MongoDB's limit on a database name, in bytes. */
export const MAX_DATABASE_BYTES = 63;

/** Why `name` cannot be a MongoDB database name, or undefined. */
export function databaseProblem(name: string): string | undefined {
  if (name === '') return 'may not be empty';
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_DATABASE_BYTES) return `is ${bytes} bytes long; MongoDB database names are at most ${MAX_DATABASE_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[/\\. "$*<>:|?\u0000-\u001f\u007f]/.test(name)) return 'may not contain / \\ . space " $ * < > : | ? or control characters';
  return undefined;
}

const database = z.string().superRefine((name, ctx) => {
  const problem = databaseProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A role name as MongoDB spells built-in and user-defined roles. */
export const roleName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, 'a role name is letters, digits, _ . or -, starting with a letter or _ (at most 64)');

export const mongodbUsersValuesSchema = z.strictObject({
  /** The database the user is created in (its authSource). */
  database,
  /** Roles in that database, e.g. `readWrite`. FerretDB v1.24 grants none: leave empty there. */
  roles: z.array(roleName).default([]),
});

/** A consumer's values on a `mongodb-users` provider, defaults applied. */
export type MongodbUsersValues = z.infer<typeof mongodbUsersValuesSchema>;
