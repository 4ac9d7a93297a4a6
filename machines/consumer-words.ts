/**
 * What the consumer machine says, in words: the sentences its log lines and reasons are made
 * of, each taking the one event it is about (narrowed with XState's `assertEvent`), so that
 * the chart in `consumer-machine.ts` reads as a chart. What it says at which level is
 * `consumer-announcements.ts`; which reason each transition keeps, `consumer-updates.ts`.
 */
import { assertEvent } from 'xstate';
import type { ConsumerContext } from './consumer-context.js';
import type { ConsumerEvent } from './consumer-events.js';
import { brakeDelay, retryDelay, type ConsumerTiming } from './delays.js';

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

/**
 * Where a backend of several nodes does not hold it: ` on 10.0.0.6:6379`; empty when it is not said (one node, or every
 * node).
 */
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

// ---- reasons: why a consumer is in its state (its context's `reason`, shown by the status) ----

/** Waiting for a grant secret that does not exist. */
export function secretMissingReason(event: ConsumerEvent): string {
  return `grant secret ${missingSecret(event)} does not exist`;
}

/** An apply or a removal failed, and is retried. */
export function failedReason(what: 'apply' | 'remove', event: ConsumerEvent): string {
  return `${what} failed: ${failure(event)}`;
}

export function unreadableReason(event: ConsumerEvent): string {
  return `grant secret unreadable: ${unreadableSecret(event)}`;
}

export function unusableReason(event: ConsumerEvent): string {
  return `grant secret unusable: ${wrongSecret(event)}`;
}

/** The backend refuses an apply (`apply`) or a removal (`remove`) until someone acts. */
export function refusedReason(what: 'apply' | 'remove', event: ConsumerEvent): string {
  return `${what} refused: ${failure(event)}`;
}

export function policyReason(event: ConsumerEvent): string {
  return `refused by policy: ${refusal(event)}`;
}

export function quarantinedReason(event: ConsumerEvent): string {
  return `quarantined: ${notHeld(event)}`;
}

/** Found not held (on the node(s) named, on a backend of several). */
export function lostReason(event: ConsumerEvent): string {
  return `${notHeld(event)}${notHeldOn(event)}`;
}

export function couldNotAskReason(event: ConsumerEvent): string {
  return `could not ask: ${failure(event)}`;
}

/** Applied again while braking: the re-applies so far, this one counted. */
export function appliedBrakingReason(context: ConsumerContext): string {
  return `applied again; ${count(context.brakeCount + 1, 're-apply', 're-applies')} without being held`;
}

// ---- what the log says (each an announcement's message: `consumer-announcements.ts`) ----

/** What a sentence of the log is about: the context before (or after) its transition's updates, and the event. */
export interface About {
  context: ConsumerContext;
  event: ConsumerEvent;
}

export function secretStillMissing({ context, event }: About): string {
  return `grant secret ${missingSecret(event)} still does not exist after ${duration(context.secretWaitedMs)}; not served`;
}

export function secretUnreadable({ event }: About): string {
  return `grant secret cannot be read: ${unreadableSecret(event)}; blocked until it can (said once, repeats are counted)`;
}

export function secretUnusable({ event }: About): string {
  return `grant secret is no usable password: ${wrongSecret(event)}; blocked until it is (said once, repeats are counted)`;
}

export function secretReadableAgain({ context }: About): string {
  return `grant secret readable again after ${count(context.blockedRepeats, 'refusal')}`;
}

/** Said after the failure is counted: the retry's wait is the next one. */
export function applyFailed({ context, event }: About, timing: ConsumerTiming): string {
  return `${context.reapplying ? 're-apply' : 'apply'} failed (${failure(event)}); retrying in ${duration(retryDelay(context.retryCount, timing))}`;
}

export function applyRefused({ event }: About): string {
  return `apply refused by the backend (${failure(event)}); not retried until the spec changes or someone asks (holdfast reapply)`;
}

export function observedNotHeld({ event }: About): string {
  return `${observation(event)}; its provider only observes: reported, not applied`;
}

export function refusedByPolicy({ event }: About): string {
  return `refused by its provider's policy, not applied: ${refusal(event)}`;
}

export function quarantined({ context, event }: About, timing: ConsumerTiming): string {
  return (
    `rules still differ after braking at brakeMax (${duration(timing.brakeMaxMs)}) for ${duration(timing.quarantineAfterMs ?? 0)} or more, ` +
    `${count(context.brakeCount, 'successful re-apply', 'successful re-applies')} in all (${notHeld(event)}); something keeps changing them: ` +
    'quarantined, not applied again until someone acts (holdfast reapply, holdfast resume, or a changed spec)'
  );
}

export function stillNotHeld({ context, event }: About, timing: ConsumerTiming): string {
  return (
    `still not held after ${count(context.brakeCount, 'successful re-apply', 'successful re-applies')} (${notHeld(event)}); ` +
    `applying again, then braking for ${duration(brakeDelay(context.brakeCount + 1, timing))}`
  );
}

/** On a backend of several nodes, applied on the node(s) that lack it only. */
export function notHeldNow({ event }: About): string {
  return `not held${notHeldOn(event)} (${notHeld(event)}); applying ${notHeldOn(event) === '' ? 'again' : 'there'} now`;
}

/** Said after the failure is counted: the retry's wait is the next one. */
export function removeFailed({ context, event }: About, timing: ConsumerTiming): string {
  return `remove failed (${failure(event)}); retrying in ${duration(retryDelay(context.retryCount, timing))}`;
}

export function removeRefused({ event }: About): string {
  return `remove refused by the backend (${failure(event)}); not retried until asked (holdfast reapply)`;
}
