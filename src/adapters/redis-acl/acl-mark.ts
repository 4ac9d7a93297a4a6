/**
 * Holdfast's mark on the ACL users it makes. The mark is a selector that holds one channel
 * pattern, `&holdfast-managed:<provider>`, and no command: it grants nothing, and it lives beside
 * the user's own rules whatever they are (a channel pattern in the user's own list would be lost
 * to `&*`, which Redis keeps alone). It is on the backend, so a lost record store cannot erase it;
 * a consumer cannot forge one, since its values cannot express a selector (their patterns get
 * their `~`/`&` from holdfast). Written with the user's rules (`acl-rules.ts`), read by who may
 * claim a login (`ownership.ts`).
 */

/** What a mark's channel pattern starts with; the provider's name follows. */
export const MARK_PREFIX = 'holdfast-managed:';

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
