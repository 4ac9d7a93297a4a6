/**
 * Who may claim an IAM user: the rule of `../claim-login.ts`, on the provider its tag names.
 */
import type { Ownership } from '../adapter.js';
import { claimRefusal } from '../claim-login.js';
import { MARK_TAG } from './identity.js';

/** An IAM user as the adapter reads it: exists, and whose mark it carries (undefined: none). */
export interface IamUser {
  owner: string | undefined;
  /** How many tags it carries, the mark included. */
  tags: number;
}

/**
 * Why `ownership`'s provider may not apply `login`, or undefined when it may. `existing` null:
 * no such user. `bare`: the user carries no tag, no access key and no policy, which is what an
 * apply cut short between `CreateUser` and `TagUser` leaves (SeaweedFS keeps no tag given to
 * `CreateUser`): it holds no credential and no right, so finishing it takes nothing from anyone.
 */
export function claimProblem(
  login: string,
  existing: IamUser | null,
  ownership: Ownership,
  bare = false,
): string | undefined {
  if (existing === null || bare) return undefined;
  const owners = existing.owner === undefined ? [] : [existing.owner];
  return claimRefusal(login, owners, ownership, {
    noun: 'IAM user',
    lacks: `the tag ${MARK_TAG}=${ownership.provider}`,
  });
}
