/**
 * What a consumer of a `postgres-roles` provider asks for: CONNECT on databases, USAGE on
 * schemas (in the admin connection's database) and membership in group roles. Names are
 * PostgreSQL identifiers, used as written (quoted, case kept), 63 bytes at most: longer ones are
 * refused here rather than truncated by the server.
 */
import { z } from 'zod';

/** PostgreSQL's NAMEDATALEN - 1: the server silently truncates longer identifiers. */
export const MAX_IDENTIFIER_BYTES = 63;

/** Why `name` cannot be a PostgreSQL identifier holdfast uses, or undefined. */
export function identifierProblem(name: string): string | undefined {
  if (name === '') return 'may not be empty';
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_IDENTIFIER_BYTES) return `is ${bytes} bytes long; PostgreSQL names are at most ${MAX_IDENTIFIER_BYTES} bytes (the server would truncate it)`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'may not contain control characters';
  return undefined;
}

export const identifierSchema = z.string().superRefine((name, ctx) => {
  const problem = identifierProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const names = z.array(identifierSchema).default([]);

export const postgresRolesValuesSchema = z.strictObject({
  /** Databases the role may connect to (GRANT CONNECT ON DATABASE). */
  databases: names,
  /** Schemas of the admin connection's database the role may use (GRANT USAGE ON SCHEMA). */
  schemas: names,
  /** Group roles the role is a member of (GRANT <group> TO <role>). */
  roles: names,
});

/** A consumer's values on a `postgres-roles` provider, defaults applied. */
export type PostgresRolesValues = z.infer<typeof postgresRolesValuesSchema>;
