/**
 * What the consumer machine's transitions do to its context, by name: each an XState `assign`,
 * named in the chart (`consumer-machine.ts`) by what it records. Reasons composed of an event
 * are `consumer-words.ts`'.
 */
import { assign } from 'xstate';
import type { ConsumerContext } from './consumer-context.js';
import type { ConsumerEvent } from './consumer-events.js';
import {
  appliedBrakingReason,
  appliedFingerprints,
  change,
  couldNotAskReason,
  failedReason,
  lostReason,
  notHeld,
  observation,
  policyReason,
  quarantinedReason,
  refusedReason,
  secretMissingReason,
  unreadableReason,
  unusableReason,
} from './consumer-words.js';
import { retryDelay, type ConsumerTiming } from './delays.js';

/** An `assign` on the consumer machine's context and events. */
const update = assign<ConsumerContext, ConsumerEvent, undefined, ConsumerEvent, never>;

const because = (reason: string) => update({ reason });

/** An apply succeeded: its fingerprints kept, the counts of what went wrong before it cleared. */
const applied = (
  reason: (c: ConsumerContext) => string,
  more: (c: ConsumerContext) => Partial<ConsumerContext> = () => ({}),
) =>
  update(({ context, event }) => ({
    ...appliedFingerprints(event),
    retryCount: 0,
    secretWaits: 0,
    secretWaitedMs: 0,
    blockedRepeats: 0,
    reason: reason(context),
    ...more(context),
  }));

/** An apply or a removal failed: counted, for its retry's wait. */
const retried = (what: 'apply' | 'remove') =>
  update(({ context, event }) => ({ retryCount: context.retryCount + 1, reason: failedReason(what, event) }));

/** The chart's updates of the context for a provider's timing, by name. */
export function contextUpdatesFor(timing: ConsumerTiming) {
  return {
    firstApply: because('first apply'),
    acceptedByPolicy: because('accepted by policy'),
    refusedByPolicy: update({ reason: ({ event }) => policyReason(event) }),
    noLongerDeclared: update({ reason: 'no longer declared', retryCount: 0 }),
    declaredAgain: update({ reason: 'declared again', retryCount: 0 }),
    /** A new spec while resting between checks: the brake starts over. */
    specChanged: update({ reason: 'spec changed', reapplying: false, brakeCount: 0 }),
    /** A new spec while waiting to apply: the brake, if any, is kept. */
    newSpec: update({ reason: 'spec changed', reapplying: false }),
    askedAgain: update({ reason: 'asked to apply again', reapplying: false, brakeCount: 0 }),
    suspended: because('suspended by an operator'),
    resumed: because('resumed by an operator'),
    /** Resumed from quarantine: applied again, and the brake starts over. */
    resumedToApply: update({ reason: 'resumed by an operator', brakeCount: 0 }),

    applied: applied(() => 'applied'),
    appliedAgain: applied(
      () => 'applied again',
      (c) => ({ brakeCount: c.brakeCount + 1 }),
    ),
    appliedAgainBraking: applied(appliedBrakingReason, (c) => ({ brakeCount: c.brakeCount + 1, reapplying: true })),
    applyFailed: retried('apply'),
    applyRefused: update({ reason: ({ event }) => refusedReason('apply', event), reapplying: false }),
    observed: update({ reason: ({ event }) => observation(event), reapplying: false }),

    // the first check after an apply that finds it held changes nothing durable (it stays `applied`): no record write;
    // a fingerprint the backend proved (`HELD` with `secretMac`) is kept, a write without an apply
    held: update({
      brakeCount: 0,
      reapplying: false,
      reason: ({ context }) => (context.reason === 'applied' ? 'applied' : 'held'),
      appliedSecretMac: ({ context, event }) =>
        event.type === 'HELD' && event.secretMac !== undefined ? event.secretMac : context.appliedSecretMac,
    }),
    lost: update({ reapplying: true, reason: ({ event }) => lostReason(event) }),
    lostForgotten: update({ brakeCount: 0, reapplying: true, reason: ({ event }) => lostReason(event) }),
    lostBraking: update({ reapplying: true, reason: ({ event }) => notHeld(event) }),
    quarantined: update({ reapplying: false, reason: ({ event }) => quarantinedReason(event) }),
    couldNotAsk: update({ reason: ({ event }) => couldNotAskReason(event) }),
    changed: update({ reason: ({ event }) => change(event), reapplying: false }),

    waitForSecret: update(({ context, event }) => ({
      secretWaits: context.secretWaits + 1,
      secretWaitedMs: context.secretWaitedMs + retryDelay(context.secretWaits + 1, timing),
      reason: secretMissingReason(event),
    })),
    blockedUnreadable: update({ blockedRepeats: 1, reason: ({ event }) => unreadableReason(event) }),
    blockedUnusable: update({ blockedRepeats: 1, reason: ({ event }) => unusableReason(event) }),
    /** Refused again to read the grant secret: counted, not said. */
    blockedAgain: update({ blockedRepeats: ({ context }) => context.blockedRepeats + 1 }),

    removeFailed: retried('remove'),
    removeRefused: update({ reason: ({ event }) => refusedReason('remove', event) }),
    removed: because('removed'),
    askedToRemoveAgain: because('asked to remove again'),
  };
}
