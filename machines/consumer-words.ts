/**
 * What the consumer machine says, in words: the sentences its log lines and reasons are made
 * of, each taking the one event it is about (narrowed with XState's `assertEvent`), so that
 * the chart in `consumer-machine.ts` reads as a chart.
 */
import { assertEvent } from 'xstate';
import type { ConsumerEvent } from './consumer-events.js';

/** `1 refusal`, `3 refusals`. */
export function count(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

/** `800 ms`, `2.5 s`, `12.5 min`. */
export function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 6000) / 10} min`;
}

/** What the backend does not hold, and why: `missing: no such ACL user`. */
export function notHeld(event: ConsumerEvent): string {
  assertEvent(event, 'NOT_HELD');
  return `${event.reason}: ${event.detail}`;
}

/** Where a backend of several nodes does not hold it: ` on 10.0.0.6:6379`; empty when it is not said (one node, or every node). */
export function notHeldOn(event: ConsumerEvent): string {
  assertEvent(event, 'NOT_HELD');
  return event.node === undefined ? '' : ` on ${event.node}`;
}

/** What an observe-only provider's backend lacks: `not held (missing: no such ACL user)`. */
export function observation(event: ConsumerEvent): string {
  assertEvent(event, 'NOT_APPLIED');
  return `not held (${event.reason}: ${event.detail})`;
}

/** Why the provider's policy refuses the consumer. */
export function refusal(event: ConsumerEvent): string {
  assertEvent(event, 'REJECT');
  return event.problems.join('; ');
}

/** Why an apply, a remove or a check failed. */
export function failure(event: ConsumerEvent): string {
  assertEvent(event, ['APPLY_FAILED', 'APPLY_REFUSED', 'REMOVE_FAILED', 'REMOVE_REFUSED', 'CHECK_FAILED']);
  return event.error;
}

/** What changed since the consumer was applied. */
export function change(event: ConsumerEvent): string {
  assertEvent(event, 'CHANGED');
  return event.what;
}

/** The grant secret that does not exist. */
export function missingSecret(event: ConsumerEvent): string {
  assertEvent(event, 'SECRET_MISSING');
  return event.path;
}

/** Why the grant secret cannot be read: path, owner, mode, uid. */
export function unreadableSecret(event: ConsumerEvent): string {
  assertEvent(event, 'SECRET_UNREADABLE');
  return event.detail;
}

/** Why the grant secret, read, cannot be a password: path and what is wrong. */
export function wrongSecret(event: ConsumerEvent): string {
  assertEvent(event, 'SECRET_INVALID');
  return event.detail;
}

/** What an apply applied: the spec and the secret's fingerprint. */
export function appliedFingerprints(event: ConsumerEvent): { appliedSpecHash: string; appliedSecretMac: string } {
  assertEvent(event, 'APPLIED');
  return { appliedSpecHash: event.specHash, appliedSecretMac: event.secretMac };
}
