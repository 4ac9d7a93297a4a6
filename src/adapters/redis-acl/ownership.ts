/**
 * Holdfast's mark on the ACL users it makes, and who may claim a login. The mark is a
 * selector that holds one channel pattern, `&holdfast-managed:<provider>`, and no command: it
 * grants nothing, and it lives beside the user's own rules whatever they are (a channel
 * pattern in the user's own list would be lost to `&*`, which Redis keeps alone). It is on the
 * backend, so a lost record store cannot erase it; a consumer cannot forge one, since its
 * values cannot express a selector (their patterns get their `~`/`&` from holdfast).
 */
import type { Ownership } from '../adapter.js';
import { claimRefusal } from '../claim-login.js';
import type { AclUser } from './acl-rules.js';

/** What a mark's channel pattern starts with; the provider's name follows. */
export const MARK_PREFIX = 'holdfast-managed:';

/**
 * Logins earlier releases of holdfast made and deleted as scratch users (to learn how a server
 * spelled a rule set). This one makes none, yet still refuses them to consumers: a release before
 * it, running beside this one during an upgrade, would delete a consumer's login of that name.
 */
export const SCRATCH_PREFIX = 'holdfast-canon-';

export function markChannel(provider: string): string {
  return `${MARK_PREFIX}${provider}`;
}

/**
 * The mark as an `ACL SETUSER` argument. `resetchannels` first: where `acl-pubsub-default`
 * is `allchannels`, a new selector starts with every channel and refuses a pattern.
 */
export function markSelector(provider: string): string {
  return `(resetchannels &${markChannel(provider)})`;
}

/** The providers whose marks a user carries, read from its selectors only. */
export function ownersOf(user: AclUser): string[] {
  const owners = user.selectors.flatMap((s) => s.channels.filter((c) => c.startsWith(MARK_PREFIX)));
  return [...new Set(owners.map((c) => c.slice(MARK_PREFIX.length)))];
}

/**
 * Why `ownership`'s provider may not apply `login`, or undefined when it may. `existing` is
 * the user as the backend has it now (null: none). `never` are logins no consumer gets even
 * with `adopt`: the admin's own and Redis's `default`.
 */
export function claimProblem(
  login: string,
  existing: AclUser | null,
  ownership: Ownership,
  never: ReadonlySet<string>,
): string | undefined {
  const { provider } = ownership;
  if (never.has(login)) {
    return `the login "${login}" is ${login === 'default' ? "Redis's default user" : "the admin's own login"}; provider "${provider}" never gives it to a consumer, adopt or not`;
  }
  if (login.startsWith(SCRATCH_PREFIX))
    return `the login "${login}" starts with "${SCRATCH_PREFIX}", which holdfast reserves for its own use`;
  if (existing === null) return undefined;
  return claimRefusal(login, ownersOf(existing), ownership, {
    noun: 'ACL user',
    lacks: `the mark "&${markChannel(provider)}"`,
  });
}
