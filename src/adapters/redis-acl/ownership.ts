/**
 * Who may claim a login: the providers whose mark (`acl-mark.ts`) an ACL user carries.
 */
import type { Ownership } from '../adapter.js';
import { claimRefusal } from '../claim-login.js';
import { MARK_PREFIX, markChannel } from './acl-mark.js';
import type { AclUser } from './acl-rules.js';

/**
 * Logins earlier releases of holdfast made and deleted as scratch users (to learn how a server
 * spelled a rule set). This one makes none, yet still refuses them to consumers: a release before
 * it, running beside this one during an upgrade, would delete a consumer's login of that name.
 */
export const SCRATCH_PREFIX = 'holdfast-canon-';

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
