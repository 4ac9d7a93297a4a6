/**
 * Admin secrets (the passwords of a provider's admin, the queue's Redis, the store and the
 * dashboard) must be long enough to be scrubbed: the scrubber leaves short strings alone (they
 * would redact ordinary words), so a short admin password could reach a log unredacted.
 */

/** Admin secrets shorter than this are refused at config load. */
export const MIN_ADMIN_SECRET_LENGTH = 8;

/** Why the secret read from `path` is refused, or undefined; never shows the secret or its length. */
export function shortAdminSecret(path: string, secret: string): string | undefined {
  if ([...secret].length >= MIN_ADMIN_SECRET_LENGTH) return undefined;
  return `${path} holds a password shorter than ${MIN_ADMIN_SECRET_LENGTH} characters; use a longer one (a short one could not be scrubbed from logs)`;
}
