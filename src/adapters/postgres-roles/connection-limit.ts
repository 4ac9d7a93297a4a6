/**
 * How many connections a consumer's role may hold at once (`CONNECTION LIMIT`), from its provider's policy: applied at
 * every create and alter, and compared by the deep check (`rolconnlimit`). What the policy says is what is applied, so
 * an operator's limit set there is never drift; one set by hand on the role and not in the policy is.
 *
 * The default, 10, is the pool size most drivers open by default (node-postgres, HikariCP, psycopg's pool, SQLAlchemy's
 * 5 + 5 overflow): one app instance fits, and one tenant can take at most 10 of a server's slots (PostgreSQL's
 * default `max_connections` is 100). An operator whose consumers run several instances raises it in the policy.
 * PostgreSQL enforces it after authentication and never for a superuser (a consumer's role is never one).
 */
import { z } from 'zod';
import type { HoldsAnswer } from '../adapter.js';

export const DEFAULT_CONNECTION_LIMIT = 10;
/** PostgreSQL's own bound on `max_connections` (MAX_BACKENDS): a higher limit would mean no limit. */
export const MAX_CONNECTION_LIMIT = 262_143;

export const connectionLimitSchema = z
  .number()
  .int()
  .min(1, 'a consumer needs at least one connection (PostgreSQL would refuse every login at 0)')
  .max(MAX_CONNECTION_LIMIT, `PostgreSQL allows at most ${MAX_CONNECTION_LIMIT} connections in all`)
  .default(DEFAULT_CONNECTION_LIMIT);

/** The clause of CREATE/ALTER ROLE that sets it. */
export function connectionLimitClause(limit: number): string {
  return `CONNECTION LIMIT ${Math.trunc(limit)}`;
}

/** Not held (`rules-differ`) when the role's `rolconnlimit` is not the policy's; undefined when it is. */
export function connectionLimitDiffers(have: number, want: number): HoldsAnswer | undefined {
  if (have === want) return undefined;
  const theirs = have === -1 ? '-1 (no limit)' : String(have);
  return {
    held: false,
    reason: 'rules-differ',
    detail: `connection limit: the role has CONNECTION LIMIT ${theirs}, the provider's policy asks for ${want}`,
  };
}
