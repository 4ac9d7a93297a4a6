/**
 * What each state means to the people who watch holdfast: its label, and whether a consumer
 * in it is served. The status, `/healthz` and the metrics classify states only through this
 * table; TypeScript refuses a state without an entry, and a test compares it with the chart.
 */
import type { ConsumerStateName } from './consumer-machine.js';

export interface StateMeaning {
  /** The state in words, e.g. `could not ask`. */
  label: string;
  /** False when the consumer is (or may be) unserved: the status is then never green. */
  healthy: boolean;
}

export const STATE_MEANINGS: Readonly<Record<ConsumerStateName, StateMeaning>> = {
  pending: { label: 'pending', healthy: false },
  applying: { label: 'applying', healthy: false },
  held: { label: 'held', healthy: true },
  checking: { label: 'checking', healthy: false },
  lost: { label: 'lost, applying again', healthy: false },
  backoff: { label: 'not held, braking', healthy: false },
  retrying: { label: 'apply failed, retrying', healthy: false },
  couldNotAsk: { label: 'could not ask', healthy: false },
  waitingForSecret: { label: 'waiting for its grant secret', healthy: false },
  blocked: { label: 'blocked: grant secret unreadable or unusable', healthy: false },
  rejected: { label: 'rejected by policy', healthy: false },
  suspended: { label: 'suspended: not checked until resumed', healthy: false },
  quarantined: {
    label: 'quarantined: its rules keep being changed back; not applied until someone acts',
    healthy: false,
  },
  observedNotHeld: { label: 'not held; observe only, not applied', healthy: false },
  removing: { label: 'removing', healthy: true },
  removeRetrying: { label: 'remove failed, retrying', healthy: false },
  applyRefused: { label: 'apply refused by the backend: waiting for someone to act', healthy: false },
  removeRefused: { label: 'remove refused by the backend: waiting for someone to act', healthy: false },
  removed: { label: 'removed', healthy: true },
};
