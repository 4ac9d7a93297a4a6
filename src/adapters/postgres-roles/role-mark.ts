/**
 * Holdfast's mark on a PostgreSQL role: its comment, naming the provider that made it. A role
 * is changed or dropped only by its own provider; one with another provider's mark never, one
 * without a mark only when the provider adopts (it is then marked). The bare mark of an older
 * holdfast (no provider) is claimed by the first provider that applies the role, and re-marked.
 */

/** The comment an older holdfast put on its roles, before marks named their provider. */
export const LEGACY_MARK = 'managed by holdfast';

const MARK_PATTERN = /^managed by holdfast \(provider ([^)]+)\)$/;

/** The comment on the roles `provider` makes. */
export function roleMark(provider: string): string {
  return `${LEGACY_MARK} (provider ${provider})`;
}

/** Whose a role is, by its comment, as seen by `provider`. */
export type RoleOwner =
  | { kind: 'ours' }
  /** An older holdfast's bare mark: this provider claims it at its next apply. */
  | { kind: 'legacy' }
  | { kind: 'provider'; provider: string }
  /** No holdfast mark: made (or its comment changed) by someone else. */
  | { kind: 'none'; comment: string | null };

export function roleOwner(comment: string | null, provider: string): RoleOwner {
  if (comment === roleMark(provider)) return { kind: 'ours' };
  if (comment === LEGACY_MARK) return { kind: 'legacy' };
  const other = comment === null ? null : MARK_PATTERN.exec(comment);
  if (other?.[1] !== undefined) return { kind: 'provider', provider: other[1] };
  return { kind: 'none', comment };
}

/** Why `provider` does not hold or change a role it does not own, in words; undefined when it may. */
export function notOwnedWords(owner: RoleOwner, provider: string): string | undefined {
  switch (owner.kind) {
    case 'ours':
    case 'legacy':
      return undefined;
    case 'provider':
      return `it belongs to provider "${owner.provider}" (its comment names it), not to provider "${provider}"`;
    case 'none':
      return `holdfast did not make it for provider "${provider}" (its comment is ${owner.comment === null ? 'empty' : `"${owner.comment}"`})`;
  }
}
