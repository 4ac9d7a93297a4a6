/**
 * The consumer machine: one consumer's credential on one provider, from first apply to
 * removal. Pure: it performs no I/O and reads no clock. Effects (`apply`, `check`,
 * `remove`) and announcements (`say`) are actions the worker performs; waits are named
 * delays the worker turns into scheduled waits (the due set).
 *
 * States:
 * - `pending`: declared, never applied.
 * - `applying`: applying the spec (first time, changed, rotated secret or asked to).
 * - `held`: applied; asked again every `verifyEvery`.
 * - `checking`: asking the backend whether it still holds the consumer.
 * - `lost`: the backend does not hold it; applying again at once.
 * - `backoff`: still not held after successful re-applies; the brake waits 2v, 4v, … ≤ brakeMax.
 * - `retrying`: an apply failed; retried with its own backoff (the brake count unchanged).
 * - `couldNotAsk`: a check threw, timed out or was skipped; nothing re-applied, asked again next time.
 * - `waitingForSecret`: the grant secret does not exist yet (quiet, then a warning past the grace).
 * - `blocked`: the grant secret exists but cannot be read, or is no usable password (empty,
 *   too short, too long, not text); said once, re-read every interval without a transition.
 * - `rejected`: the provider's policy refuses the consumer, never accepted; nothing applied. (A
 *   consumer accepted once keeps its last accepted spec instead: `desired-event.ts`.)
 * - `observedNotHeld`: the provider only observes (`management: observe`) and the backend does
 *   not hold the consumer as declared: said once (again when what differs changes), asked
 *   again every interval, never applied.
 * - `suspended`: an operator paused it (`holdfast suspend`); its login is left as it is, not
 *   checked and not applied, until `holdfast resume`.
 * - `quarantined`: its rules still differ after its brake waited at `brakeMax` for
 *   `quarantineAfter` (a setting, off unless given): something keeps changing them back, so
 *   it is left unapplied and red until someone acts (`holdfast reapply`, `resume`, a new spec).
 * - `removing` / `removeRetrying` / `removed`: the consumer is no longer wanted.
 * - `applyRefused`: the backend refuses the apply until someone acts (a role holdfast did not
 *   make, roles the server cannot grant); said once, not retried after a wait: a new spec or
 *   `holdfast reapply` tries again.
 * - `removeRefused`: the backend refuses the remove until someone acts (a role that still owns
 *   objects); said once, not retried after a wait: `holdfast reapply` (or `check`) tries again.
 *
 * The engine's vocabulary (states, effects, waits, tags) is read off this chart at the end of
 * the file, never listed beside it. Extending it (a state, an event, a wait): see
 * `docs/extending.md`.
 */
import { setup, type SnapshotFrom, type StateNode } from 'xstate';
import { announcementsFor } from './consumer-announcements.js';
import { initialContext, type ConsumerContext, type ConsumerInput } from './consumer-context.js';
import type { Announcement, ConsumerEvent } from './consumer-events.js';
import { contextUpdatesFor } from './consumer-updates.js';
import { observation } from './consumer-words.js';
import { brakeDelay, quarantineDue, retryDelay, verifyDelay, type ConsumerTiming } from './delays.js';

export type { ConsumerContext, ConsumerInput } from './consumer-context.js';

/** The chart's waits: named delays computed from context; the worker turns each into a scheduled wait. */
function waitsFor(timing: ConsumerTiming) {
  return {
    verify: ({ context }: { context: ConsumerContext }) => verifyDelay(context.key, timing),
    brake: ({ context }: { context: ConsumerContext }) => brakeDelay(context.brakeCount, timing),
    retry: ({ context }: { context: ConsumerContext }) => retryDelay(context.retryCount, timing),
    secretWait: ({ context }: { context: ConsumerContext }) => retryDelay(context.secretWaits, timing),
  };
}

/** A wait of the chart, by its name in `setup({ delays })`. */
export type WaitName = keyof ReturnType<typeof waitsFor>;

/** The effects a state asks the worker to perform as it is entered (`workers/effects.ts` performs them). */
const effects = { apply: () => undefined, check: () => undefined, remove: () => undefined };

/** An effect of the chart, by its action's name. */
export type EffectType = keyof typeof effects;

/**
 * What a state is, for the engine, beyond its name: `removing`, a removal under way (in flight
 * or retrying after a wait): the consumer no longer counts as declared.
 */
export type ConsumerTag = 'removing';

/** The machine's types, waits, effects and guards, for a provider's timing. */
function consumerSetup(timing: ConsumerTiming) {
  return setup({
    types: {
      context: {} as ConsumerContext,
      events: {} as ConsumerEvent,
      input: {} as ConsumerInput,
      tags: {} as ConsumerTag,
    },
    delays: waitsFor(timing),
    actions: {
      ...effects,
      /** Something the log must say (`consumer-announcements.ts`); the worker says it. */
      say: (_, _params: Announcement) => undefined,
    },
    guards: {
      reapplying: ({ context }) => context.reapplying,
      specChanged: ({ context, event }) => event.type === 'DESIRED' && event.specHash !== context.appliedSpecHash,
      braking: ({ context }) => context.brakeCount >= 1,
      /** A loss the backend's forgetting explains (`NOT_HELD` with `forgot`): no disagreement, the brake starts over. */
      forgotten: ({ event }) => event.type === 'NOT_HELD' && event.forgot === true,
      firstRefusal: ({ context }) => context.blockedRepeats === 0,
      wasBlocked: ({ context }) => context.blockedRepeats > 0,
      /** An observe-only provider's backend still lacks the consumer in the same way as last said. */
      sameObservation: ({ context, event }) => event.type === 'NOT_APPLIED' && context.reason === observation(event),
      /** The wait that just ended took the total past the grace period. */
      secretLate: ({ context }) =>
        context.secretWaitedMs >= timing.secretGraceMs &&
        context.secretWaitedMs - retryDelay(context.secretWaits, timing) < timing.secretGraceMs,
      /** Its rules still differ after the brake waited at its maximum for `quarantineAfter` (see `delays.ts`). */
      quarantine: ({ context, event }) =>
        event.type === 'NOT_HELD' && event.reason === 'rules-differ' && quarantineDue(context.brakeCount, timing),
    },
  });
}

/**
 * Builds the machine for a provider's timing: the chart, each state with its transitions. What a
 * transition does to the context is an update (`consumer-updates.ts`), what it says an
 * announcement (`consumer-announcements.ts`), each by name; guards and waits are named in setup.
 * A state entered with an effect is re-entered by `REDO` (found mid-effect: its worker died),
 * performing its effect again (a test holds every such state to it).
 */
export function createConsumerMachine(timing: ConsumerTiming) {
  const update = contextUpdatesFor(timing);
  const say = announcementsFor(timing);
  // What several states answer alike: each group written once, spread into the states it names.
  /** held, backoff, couldNotAsk, quarantined, observedNotHeld: suspended, asked now, applied again, or given a new spec. */
  const betweenChecks = {
    SUSPEND: { target: 'suspended', actions: update.suspended },
    CHECK_NOW: 'checking',
    REAPPLY: { target: 'applying', actions: update.askedAgain },
    DESIRED: { guard: 'specChanged', target: 'applying', actions: update.specChanged },
  } as const;
  /** retrying, waitingForSecret, blocked, applyRefused: suspended, applied now, or given a new spec. */
  const waitingToApply = {
    SUSPEND: { target: 'suspended', actions: update.suspended },
    REAPPLY: { target: 'applying', actions: update.askedAgain },
    DESIRED: { target: 'applying', actions: update.newSpec },
  } as const;
  /** applying, checking, lost: an observe-only backend, and a grant secret that cannot be had. */
  const secretOrObserved = {
    NOT_APPLIED: [
      { guard: 'sameObservation', target: 'observedNotHeld' },
      { target: 'observedNotHeld', actions: [update.observed, say.observedNotHeld] },
    ],
    SECRET_MISSING: [
      {
        guard: 'secretLate',
        target: 'waitingForSecret',
        actions: [say.secretStillMissing, update.waitForSecret],
      },
      { target: 'waitingForSecret', actions: update.waitForSecret },
    ],
    SECRET_UNREADABLE: [
      { guard: 'firstRefusal', target: 'blocked', actions: [update.blockedUnreadable, say.secretUnreadable] },
      { target: 'blocked', actions: update.blockedAgain },
    ],
    SECRET_INVALID: [
      { guard: 'firstRefusal', target: 'blocked', actions: [update.blockedUnusable, say.secretUnusable] },
      { target: 'blocked', actions: update.blockedAgain },
    ],
  } as const;
  /** applying, lost: a failed or refused apply. */
  const applyFailures = {
    APPLY_FAILED: { target: 'retrying', actions: [update.applyFailed, say.applyFailed] },
    APPLY_REFUSED: { target: 'applyRefused', actions: [update.applyRefused, say.applyRefused] },
  } as const;
  return consumerSetup(timing).createMachine({
    id: 'consumer',
    context: initialContext,
    initial: 'pending',
    on: {
      REMOVE: { target: '.removing', actions: update.noLongerDeclared },
      REJECT: { target: '.rejected', actions: [update.refusedByPolicy, say.refusedByPolicy] },
    },
    states: {
      pending: {
        on: { DESIRED: { target: 'applying', actions: update.firstApply } },
      },

      applying: {
        entry: 'apply',
        on: {
          REDO: { target: 'applying', reenter: true },
          APPLIED: [
            { guard: 'wasBlocked', target: 'held', actions: [say.secretReadableAgain, update.applied] },
            { target: 'held', actions: update.applied },
          ],
          ...applyFailures,
          ...secretOrObserved,
        },
      },

      held: {
        after: { verify: 'checking' },
        on: {
          ...betweenChecks,
        },
      },

      checking: {
        entry: 'check',
        on: {
          REDO: { target: 'checking', reenter: true },
          HELD: { target: 'held', actions: update.held },
          NOT_HELD: [
            { guard: 'forgotten', target: 'lost', actions: [update.lostForgotten, say.notHeld] },
            { guard: 'quarantine', target: 'quarantined', actions: [update.quarantined, say.quarantined] },
            { guard: 'braking', target: 'lost', actions: [update.lostBraking, say.stillNotHeld] },
            { target: 'lost', actions: [update.lost, say.notHeld] },
          ],
          CHECK_FAILED: { target: 'couldNotAsk', actions: update.couldNotAsk },
          CHANGED: { target: 'applying', actions: update.changed },
          ...secretOrObserved,
        },
      },

      lost: {
        entry: 'apply',
        on: {
          REDO: { target: 'lost', reenter: true },
          APPLIED: [
            { guard: 'braking', target: 'backoff', actions: update.appliedAgainBraking },
            { target: 'held', actions: update.appliedAgain },
          ],
          ...applyFailures,
          ...secretOrObserved,
        },
      },

      backoff: {
        after: { brake: 'checking' },
        on: {
          ...betweenChecks,
        },
      },

      retrying: {
        // a re-apply when the consumer was lost, else an apply
        after: { retry: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: {
          ...waitingToApply,
        },
      },

      couldNotAsk: {
        after: { verify: 'checking' },
        on: {
          ...betweenChecks,
        },
      },

      waitingForSecret: {
        after: { secretWait: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: {
          ...waitingToApply,
        },
      },

      blocked: {
        // re-read every interval: refused again, counted without a word
        after: { verify: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: {
          ...waitingToApply,
        },
      },

      rejected: {
        on: { DESIRED: { target: 'applying', actions: update.acceptedByPolicy } },
      },

      // an operator's pause: no check, no apply (a new spec waits); resumed, it is asked at once
      suspended: {
        on: { RESUME: { target: 'checking', actions: update.resumed } },
      },

      // rules that keep coming back: no check, no apply until someone acts; resumed, it is applied and the brake starts
      // over
      quarantined: {
        on: {
          ...betweenChecks,
          RESUME: { target: 'applying', actions: update.resumedToApply },
        },
      },

      // observe only: asked again every interval by an apply that only asks (see workers/effects.ts)
      observedNotHeld: {
        after: { verify: 'applying' },
        on: {
          ...betweenChecks,
        },
      },

      removing: {
        tags: 'removing',
        entry: 'remove',
        on: {
          REDO: { target: 'removing', reenter: true },
          REMOVE: {},
          REMOVED: { target: 'removed', actions: update.removed },
          REMOVE_FAILED: { target: 'removeRetrying', actions: [update.removeFailed, say.removeFailed] },
          REMOVE_REFUSED: { target: 'removeRefused', actions: [update.removeRefused, say.removeRefused] },
          DESIRED: { target: 'applying', actions: update.declaredAgain },
        },
      },

      // no wait: trying again changes nothing until someone acts on the backend, then asks
      applyRefused: {
        on: {
          ...waitingToApply,
        },
      },

      removeRefused: {
        on: {
          REMOVE: {},
          REAPPLY: { target: 'removing', actions: update.askedToRemoveAgain },
          CHECK_NOW: { target: 'removing', actions: update.askedToRemoveAgain },
          DESIRED: { target: 'applying', actions: update.declaredAgain },
        },
      },

      removeRetrying: {
        tags: 'removing',
        after: { retry: 'removing' },
        on: {
          REMOVE: {},
          DESIRED: { target: 'applying', actions: update.declaredAgain },
        },
      },

      removed: { type: 'final' },
    },
  });
}

export type ConsumerMachine = ReturnType<typeof createConsumerMachine>;

/** The machine's states, as its definition names them. */
export type ConsumerStateName = SnapshotFrom<ConsumerMachine>['value'];

/**
 * The chart as a definition, read for the vocabulary the engine shares with it; its timing is
 * a placeholder (a provider runs `createConsumerMachine(timing)`). Timing sets how long the
 * waits are, never which states, effects, waits or tags there are (a test holds that).
 */
export const CHART: ConsumerMachine = createConsumerMachine({
  verifyEveryMs: 1,
  brakeMaxMs: 1,
  retryBaseMs: 1,
  jitter: 0,
  secretGraceMs: 1,
});
const nodes = CHART.root.states as Record<ConsumerStateName, StateNode<ConsumerContext, ConsumerEvent>>;
const statesWhere = (
  test: (node: StateNode<ConsumerContext, ConsumerEvent>) => boolean,
): ReadonlySet<ConsumerStateName> =>
  new Set((Object.keys(nodes) as ConsumerStateName[]).filter((state) => test(nodes[state])));

/** Every state of the chart. */
export const CONSUMER_STATES: ReadonlySet<ConsumerStateName> = statesWhere(() => true);

/** The chart's effects (`apply`, `check`, `remove`). */
export const EFFECTS: ReadonlySet<EffectType> = new Set(Object.keys(effects) as EffectType[]);

/** The effect a state performs as it is entered, if any. */
export function effectOf(state: ConsumerStateName): EffectType | undefined {
  return nodes[state].entry.find(
    (action): action is EffectType => typeof action === 'string' && EFFECTS.has(action as EffectType),
  );
}

/**
 * States in which an effect is in flight (entered with one); a record found in one was left by a worker that died, and
 * is redone.
 */
export const EFFECT_STATES: ReadonlySet<ConsumerStateName> = statesWhere(
  (node) => effectOf(node.key as ConsumerStateName) !== undefined,
);

/** States tagged `tag` in the chart. */
export function statesTagged(tag: ConsumerTag): ReadonlySet<ConsumerStateName> {
  return statesWhere((node) => node.tags.includes(tag));
}

/** States of a removal under way (in flight or retrying): the consumer no longer counts as declared. */
export const REMOVING_STATES = statesTagged('removing');

/** The chart's named delays, which records and jobs name. */
export const WAIT_NAMES: readonly WaitName[] = Object.keys(CHART.implementations.delays) as WaitName[];
