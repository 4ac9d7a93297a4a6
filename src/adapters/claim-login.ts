/**
 * Who may claim a login that already exists, from the marks it carries: the one provider whose
 * mark it carries alone, or, when it carries none, a provider that adopts. Another provider's
 * login is never taken, adopt or not. Each adapter reads the marks its own way; the rule and
 * its words are one.
 */
import type { Ownership } from './adapter.js';

/**
 * How an adapter names what it refuses: `ACL user`, `IAM user`; and the mark it lacks, e.g. `the tag
 * holdfast-managed=cache`.
 */
export interface ClaimWords {
  noun: string;
  lacks: string;
}

/** True when `owners` is exactly `provider`: a login carrying another provider's mark as well is not its own. */
export function ownedBy(owners: readonly string[], provider: string): boolean {
  return owners.length === 1 && owners[0] === provider;
}

/**
 * Why `ownership`'s provider may not change the existing login `login`, which carries the marks
 * of `owners` (providers' names; empty: none), or undefined when it may.
 */
export function claimRefusal(
  login: string,
  owners: readonly string[],
  ownership: Ownership,
  words: ClaimWords,
): string | undefined {
  const { provider } = ownership;
  if (ownedBy(owners, provider)) return undefined;
  const others = owners.filter((o) => o !== provider);
  if (others.length > 0) {
    const names = others.map((o) => `"${o}"`).join(', ');
    return `the ${words.noun} "${login}" carries the mark of provider ${names}, not "${provider}"'s; it is left as it is (adopt does not take another provider's login); give the consumer another login, or remove it from that provider`;
  }
  if (ownership.adopt) return undefined;
  return `the ${words.noun} "${login}" exists but was not made by holdfast for provider "${provider}" (it lacks ${words.lacks}); it is left as it is; give the consumer another login, or set adopt: true on provider "${provider}" to take it over`;
}
