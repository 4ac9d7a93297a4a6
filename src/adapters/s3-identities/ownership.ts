/**
 * Who may claim an IAM user: one holdfast made for this provider (its tag), one it adopts, or
 * none. A user carrying another provider's mark is never taken, adopt or not.
 */
import type { Ownership } from '../adapter.js';
import { MARK_TAG } from './identity.js';

/** An IAM user as the adapter reads it: exists, and whose mark it carries (undefined: none). */
export interface IamUser {
  owner: string | undefined;
}

/** Why `ownership`'s provider may not apply `login`, or undefined when it may. `existing` null: no such user. */
export function claimProblem(login: string, existing: IamUser | null, ownership: Ownership): string | undefined {
  const { provider } = ownership;
  if (existing === null || existing.owner === provider) return undefined;
  if (existing.owner !== undefined) {
    return `the IAM user "${login}" carries the mark of provider "${existing.owner}", not "${provider}"'s; it is left as it is (adopt does not take another provider's login); give the consumer another login, or remove it from that provider`;
  }
  if (ownership.adopt) return undefined;
  return `the IAM user "${login}" exists but was not made by holdfast for provider "${provider}" (it lacks the tag ${MARK_TAG}=${provider}); it is left as it is; give the consumer another login, or set adopt: true on provider "${provider}" to take it over`;
}
