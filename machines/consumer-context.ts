/**
 * What the consumer machine remembers between events: its context, persisted with its state in
 * the consumer's record (`machine-step.ts`). A field added or renamed here changes what records
 * hold: raise the machine version (`machine-step.ts`) and migrate.
 */

export interface ConsumerContext {
  /** `<provider>/<id>`. */
  key: string;
  /** The spec and secret fingerprint last applied successfully. */
  appliedSpecHash: string | null;
  appliedSecretMac: string | null;
  /** Successful re-applies since the backend last held the consumer. */
  brakeCount: number;
  /** Failed applies (or removes) in a row. */
  retryCount: number;
  /** The next apply is a re-apply after a loss (it counts toward the brake). */
  reapplying: boolean;
  /** Waits for a missing grant secret so far, and their total. */
  secretWaits: number;
  secretWaitedMs: number;
  /** Refusals to read the grant secret since it was first refused (said once, then counted). */
  blockedRepeats: number;
  /** Why the consumer is in its state, in words; never a secret. */
  reason: string | null;
}

export interface ConsumerInput {
  key: string;
}

/**
 * A newly declared consumer's context. XState's `transition()` computes one without input for every event: tolerated.
 */
export function initialContext({ input }: { input: ConsumerInput | undefined }): ConsumerContext {
  return {
    key: input?.key ?? '',
    appliedSpecHash: null,
    appliedSecretMac: null,
    brakeCount: 0,
    retryCount: 0,
    reapplying: false,
    secretWaits: 0,
    secretWaitedMs: 0,
    blockedRepeats: 0,
    reason: null,
  };
}
