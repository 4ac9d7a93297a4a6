/**
 * A user's roles compared by meaning: as a set of (role, db) pairs, whatever order `usersInfo` lists them in or
 * however often one repeats. A role named without a db (a bare string, or `{ role }` alone, as `createUser` and
 * `updateUser` accept) is a role in the user's own database, as the server reads it. Role names are compared as
 * written: MongoDB's are case-sensitive (`readwrite` is not `readWrite`).
 */

/** A role as `usersInfo` lists it, or as a command may name it. */
export type RoleEntry = string | { role: string; db?: string };

/** How many roles a detail names before it counts the rest. */
const SHOWN = 10;

/** `role` in `database` as a set's key and in words: bare in the user's own database, `role@db` elsewhere. */
function named(entry: RoleEntry, database: string): { key: string; words: string } {
  const role = typeof entry === 'string' ? entry : entry.role;
  const db = typeof entry === 'string' || entry.db === undefined ? database : entry.db;
  return { key: `${db}\u0000${role}`, words: db === database ? `"${role}"` : `"${role}" in "${db}"` };
}

function listed(entries: Map<string, string>, keys: readonly string[]): string {
  const words = keys.map((k) => entries.get(k) ?? k).sort();
  const more = words.length - SHOWN;
  return words.slice(0, SHOWN).join(', ') + (more > 0 ? ` and ${more} more` : '');
}

/**
 * What differs between the roles a user `has` and the ones `wanted` in the user's `database`, in words; undefined when
 * they are the same set.
 */
export function rolesDifference(
  has: readonly RoleEntry[],
  database: string,
  wanted: readonly string[],
): string | undefined {
  const words = new Map<string, string>();
  const keys = (entries: readonly RoleEntry[]) =>
    new Set(
      entries.map((e) => {
        const { key, words: w } = named(e, database);
        words.set(key, w);
        return key;
      }),
    );
  const have = keys(has);
  const want = keys(wanted);
  const extra = [...have].filter((k) => !want.has(k));
  const lacking = [...want].filter((k) => !have.has(k));
  const parts = [
    ...(extra.length > 0 ? [`the backend also grants ${listed(words, extra)}`] : []),
    ...(lacking.length > 0 ? [`the backend lacks ${listed(words, lacking)}`] : []),
  ];
  return parts.length === 0 ? undefined : `roles: ${parts.join('; ')}`;
}
