/**
 * Failed logins of a consumer's login since a moment: what a rotation's cutover waits on beside its
 * old connections (`workers/overlap-evidence.ts`). The reader of a backend's failed logins (Redis
 * `ACL LOG`) implements it; until one is wired, {@link NO_FAILED_LOGINS_KNOWN} answers `unknown`,
 * which holds no overlap open: no evidence of a failure is no reason to keep the old password.
 */
export interface FailedLoginsSince {
  /** Failed logins of `login` on `provider`'s backend at or after `atMs` (ms since the epoch), or `unknown`. */
  since(provider: string, login: string, atMs: number): Promise<number | 'unknown'>;
}

/** No reader of failed logins: every answer is `unknown`. */
export const NO_FAILED_LOGINS_KNOWN: FailedLoginsSince = {
  since: () => Promise.resolve('unknown'),
};
