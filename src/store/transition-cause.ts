/**
 * Who caused a consumer's transition, as its history keeps it (`consumer-record.ts`, the timeline
 * `src/queue/timeline-event.ts`): told from the job that moved it, never from words. Entries
 * written before holdfast kept causes have none, and say so (`null` in `holdfast history`).
 */

export const TRANSITION_CAUSES = [
  /** The desired-state sync: a spec new, changed, removed, or refused by the policy. */
  'desired',
  /** A command: `holdfast check`, `reapply`, `suspend`, `resume` (or holdfast asking again once a provider answers). */
  'command',
  /** A check found it: held, not held, changed, could not ask. */
  'check',
  /** Applied again after a check found it not held (written or not: `workers/consumer-run.ts`). */
  'heal',
  /** A wait ended: a retry, the brake, a wait for a grant secret. */
  'wait',
  /** A worker died in the middle of an effect; it was performed again. */
  'recovery',
  /** The backend's own log said it (its app's failed logins: turned away); not a change of state. */
  'backend',
  /**
   * A node event of its provider's backend (restarted, re-initialised, promoted, answering again, a loss wave) made it
   * suspect, asked at once: a line of its history read from the provider's node events, never written to the record.
   */
  'node',
] as const;

export type TransitionCause = (typeof TRANSITION_CAUSES)[number];

const CAUSES: ReadonlySet<string> = new Set(TRANSITION_CAUSES);

/**
 * `value` when it is a cause of this holdfast, else undefined (a newer holdfast's cause reads as none, never as
 * damage).
 */
export function causeOf(value: unknown): TransitionCause | undefined {
  return typeof value === 'string' && CAUSES.has(value) ? (value as TransitionCause) : undefined;
}

/** How long a node's name may be in a history entry (longer is cut). */
export const NODE_NAME_BYTES = 200;

/** A node's name as a history entry keeps it: a string of bounded length, else undefined. */
export function nodeOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, NODE_NAME_BYTES) : undefined;
}

/** What a job of `kind` (a wait's job: `wait`) causes. */
export function jobCause(kind: 'wait' | 'desired' | 'command' | 'redo', wait?: string): TransitionCause {
  if (kind === 'wait') return wait === 'verify' ? 'check' : 'wait';
  return kind === 'redo' ? 'recovery' : kind;
}

/** What causes the transitions that follow one into `to` in the same job: after a loss, what is done is a heal. */
export function causeAfter(cause: TransitionCause, to: string): TransitionCause {
  return to === 'lost' ? 'heal' : cause;
}
