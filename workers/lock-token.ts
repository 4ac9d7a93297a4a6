/**
 * A lock's holder token: what tells one claim of a consumer's lock from every other, so that a release or an extend
 * acts only on the claim it was given. Unique for the life of the queue's Redis without a random UUID each (36
 * characters sent twice per routine check, claimed and released): 48 random bits made once per process, then a count.
 */
import { randomBytes } from 'node:crypto';

const PROCESS = randomBytes(6).toString('base64url');
let count = 0;

/** A token no other claim of any process holds. */
export function lockToken(): string {
  count += 1;
  return `${PROCESS}${count.toString(36)}`;
}
