/**
 * What a consumer of a `mongodb-users` provider asks for: the database its user lives in (the
 * `authSource` it authenticates against) and the roles it has there.
 */
import { z } from 'zod';
import { boundedList, CONTROL_OR_FORMAT, type ListBound } from '../value-bounds.js';

/** MongoDB's limit on a database name, in bytes. */
export const MAX_DATABASE_BYTES = 63;

/** Why `name` cannot be a MongoDB database name, or undefined. */
export function databaseProblem(name: string): string | undefined {
  if (name === '') return 'may not be empty';
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_DATABASE_BYTES)
    return `is ${bytes} bytes long; MongoDB database names are at most ${MAX_DATABASE_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[/\\. "$*<>:|?\u0000-\u001f\u007f]/.test(name) || CONTROL_OR_FORMAT.test(name)) {
    return 'may not contain / \\ . space " $ * < > : | ?, control characters or Unicode format characters';
  }
  return undefined;
}

const database = z.string().superRefine((name, ctx) => {
  const problem = databaseProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A role name as MongoDB spells built-in and user-defined roles. */
export const roleName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/,
    'a role name is letters, digits, _ . or -, starting with a letter or _ (at most 64)',
  );

/** What one consumer may ask for, at most (the database is one name, bounded by MongoDB's limit). */
export const MONGODB_USERS_BOUNDS = {
  roles: { maxItems: 64, maxBytes: 4 * 1024, noun: 'roles' },
} as const satisfies Record<string, ListBound>;

export const mongodbUsersValuesSchema = z.strictObject({
  /** The database the user is created in (its authSource). */
  database,
  /** Roles in that database, e.g. `readWrite`. FerretDB v1.24 grants none: leave empty there. */
  roles: boundedList(roleName, MONGODB_USERS_BOUNDS.roles).default([]),
});

/** A consumer's values on a `mongodb-users` provider, defaults applied. */
export type MongodbUsersValues = z.infer<typeof mongodbUsersValuesSchema>;
