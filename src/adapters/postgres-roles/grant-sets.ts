/**
 * A role's memberships and privileges compared by meaning: as sets of names, read from the catalogs
 * (`pg_auth_members`, and each object's ACL through `aclexplode`, so `{app=cT/owner}` and `{app=Tc/owner}`, one GRANT
 * of two privileges or two GRANTs of one, or the same privilege granted twice by two grantors are all the same). Names
 * are compared as PostgreSQL keeps them: holdfast quotes every identifier it sends, so a grant's `"Readers"` is the
 * role `Readers` and not `readers` (an unquoted `Readers` in SQL).
 */

/** How many names a detail lists before it counts the rest. */
const SHOWN = 10;

const list = (names: readonly string[]) => {
  const more = names.length - SHOWN;
  return (
    names
      .slice(0, SHOWN)
      .map((n) => `"${n}"`)
      .join(', ') + (more > 0 ? ` and ${more} more` : '')
  );
};

/**
 * What the backend has beyond `want` and what it lacks of it, named by `field`, in words; undefined when they are the
 * same set.
 */
export function setDifference(field: string, have: readonly string[], want: readonly string[]): string | undefined {
  const wanted = new Set(want);
  const had = new Set(have);
  const extra = [...had].filter((n) => !wanted.has(n)).sort();
  const lacking = [...wanted].filter((n) => !had.has(n)).sort();
  const parts = [
    ...(extra.length > 0 ? [`the backend also has ${list(extra)}`] : []),
    ...(lacking.length > 0 ? [`it lacks ${list(lacking)}`] : []),
  ];
  return parts.length === 0 ? undefined : `${field}: ${parts.join('; ')}`;
}
