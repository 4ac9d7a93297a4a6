/**
 * What a consumer of a `postgres-roles` provider asks for: CONNECT on databases, USAGE on
 * schemas (in the admin connection's database) and membership in group roles. Names are
 * PostgreSQL identifiers, used as written (quoted, case kept), 63 bytes at most: longer ones are
 * refused here rather than truncated by the server.
 */
import { z } from 'zod';
import { boundedList, CONTROL_OR_FORMAT, type ListBound } from '../value-bounds.js';

/** PostgreSQL's NAMEDATALEN - 1: the server silently truncates longer identifiers. */
export const MAX_IDENTIFIER_BYTES = 63;

/** Why `name` cannot be a PostgreSQL identifier holdfast uses, or undefined. */
export function identifierProblem(name: string): string | undefined {
  if (name === '') return 'may not be empty';
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_IDENTIFIER_BYTES)
    return `is ${bytes} bytes long; PostgreSQL names are at most ${MAX_IDENTIFIER_BYTES} bytes (the server would truncate it)`;
  if (CONTROL_OR_FORMAT.test(name))
    return 'may not contain control characters or Unicode format characters (such as U+202E)';
  return undefined;
}

export const identifierSchema = z.string().superRefine((name, ctx) => {
  const problem = identifierProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/**
 * What one consumer may ask for, at most: each name is one statement in the apply's transaction
 * (a list of 200,000 held a provider's connections for minutes), so each list stays short.
 */
export const POSTGRES_ROLES_BOUNDS = {
  databases: { maxItems: 64, maxBytes: 4 * 1024, noun: 'databases' },
  schemas: { maxItems: 64, maxBytes: 4 * 1024, noun: 'schemas' },
  roles: { maxItems: 64, maxBytes: 4 * 1024, noun: 'group roles' },
} as const satisfies Record<string, ListBound>;

export const postgresRolesValuesSchema = z.strictObject({
  /** Databases the role may connect to (GRANT CONNECT ON DATABASE). */
  databases: boundedList(identifierSchema, POSTGRES_ROLES_BOUNDS.databases).default([]),
  /** Schemas of the admin connection's database the role may use (GRANT USAGE ON SCHEMA). */
  schemas: boundedList(identifierSchema, POSTGRES_ROLES_BOUNDS.schemas).default([]),
  /** Group roles the role is a member of (GRANT <group> TO <role>). */
  roles: boundedList(identifierSchema, POSTGRES_ROLES_BOUNDS.roles).default([]),
});

/** A consumer's values on a `postgres-roles` provider, defaults applied. */
export type PostgresRolesValues = z.infer<typeof postgresRolesValuesSchema>;
