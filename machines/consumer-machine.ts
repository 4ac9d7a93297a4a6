/**
 * The consumer machine: one consumer's credential on one provider, from first apply to
 * removal. Pure: it performs no I/O and reads no clock. Effects (`apply`, `check`,
 * `remove`) and announcements (`say`) are actions the worker performs; waits are named
 * delays the worker turns into scheduled waits (the due set).
 *
 * States:
 * - `pending`: declared, never applied.
 * - `applying`: applying the spec (first time, changed, rotated secret or asked to).
 * - `held`: applied; asked again every verify interval.
 * - `verifying`: asking the backend whether it still holds the consumer.
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
import type { Announcement, ConsumerEvent } from './consumer-events.js';
import { appliedFingerprints, change, count, duration, failure, missingSecret, notHeld, notHeldOn, observation, refusal, unreadableSecret, wrongSecret } from './consumer-words.js';
import { brakeDelay, quarantineDue, retryDelay, verifyDelay, type ConsumerTiming } from './delays.js';

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

type Say = (args: { context: ConsumerContext; event: ConsumerEvent }) => string;

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

/** The machine's types, delays, guards and the actions the worker performs, for a provider's timing. */
function consumerSetup(timing: ConsumerTiming) {
  const secretDelay = (waits: number) => retryDelay(waits, timing);
  return setup({
    types: { context: {} as ConsumerContext, events: {} as ConsumerEvent, input: {} as ConsumerInput, tags: {} as ConsumerTag },
    delays: waitsFor(timing),
    actions: {
      ...effects,
      say: (_, _params: Announcement) => undefined,
    },
    guards: {
      reapplying: ({ context }) => context.reapplying,
      specChanged: ({ context, event }) => event.type === 'DESIRED' && event.specHash !== context.appliedSpecHash,
      braking: ({ context }) => context.brakeCount >= 1,
      firstRefusal: ({ context }) => context.blockedRepeats === 0,
      wasBlocked: ({ context }) => context.blockedRepeats > 0,
      /** An observe-only provider's backend still lacks the consumer in the same way as last said. */
      sameObservation: ({ context, event }) => event.type === 'NOT_APPLIED' && context.reason === observation(event),
      /** The wait that just ended took the total past the grace period. */
      secretLate: ({ context }) =>
        context.secretWaitedMs >= timing.secretGraceMs && context.secretWaitedMs - secretDelay(context.secretWaits) < timing.secretGraceMs,
      /** Its rules still differ after the brake waited at its maximum for `quarantineAfter` (see `delays.ts`). */
      quarantine: ({ context, event }) => event.type === 'NOT_HELD' && event.reason === 'rules-differ' && quarantineDue(context.brakeCount, timing),
    },
  });
}

/** The transitions' shared parts, by name: what they do to the context, what they say, where they go. */
function handlers(m: ReturnType<typeof consumerSetup>, timing: ConsumerTiming) {
  const secretDelay = (waits: number) => retryDelay(waits, timing);
  const say = (level: Announcement['level'], message: Say) => ({
    type: 'say' as const,
    params: (args: Parameters<Say>[0]): Announcement => ({ level, message: message(args) }),
  });

  // what transitions do to the context, by name
  const because = (reason: string) => m.assign({ reason });
  /** An apply succeeded: its fingerprints kept, the counts of what went wrong before it cleared. */
  const applied = (reason: (c: ConsumerContext) => string, more: (c: ConsumerContext) => Partial<ConsumerContext> = () => ({})) =>
    m.assign(({ context, event }) => ({
      ...appliedFingerprints(event),
      retryCount: 0,
      secretWaits: 0,
      secretWaitedMs: 0,
      blockedRepeats: 0,
      reason: reason(context),
      ...more(context),
    }));
  const askedAgain = m.assign({ reason: 'asked to apply again', reapplying: false, brakeCount: 0 });
  const specChanged = m.assign({ reason: 'spec changed', reapplying: false, brakeCount: 0 });
  const declaredAgain = m.assign({ reason: 'declared again', retryCount: 0 });
  const waitForSecret = m.assign(({ context, event }) => ({
    secretWaits: context.secretWaits + 1,
    secretWaitedMs: context.secretWaitedMs + secretDelay(context.secretWaits + 1),
    reason: `grant secret ${missingSecret(event)} does not exist`,
  }));
  const retried = (what: 'apply' | 'remove') =>
    m.assign(({ context, event }) => ({ retryCount: context.retryCount + 1, reason: `${what} failed: ${failure(event)}` }));

  /** Applying or re-applying, when the grant secret cannot be had. */
  const secretOutcomes = {
    SECRET_MISSING: [
      {
        guard: 'secretLate' as const,
        target: 'waitingForSecret' as const,
        actions: [say('warn', ({ context, event }) => `grant secret ${missingSecret(event)} still does not exist after ${duration(context.secretWaitedMs)}; not served`), waitForSecret],
      },
      { target: 'waitingForSecret' as const, actions: waitForSecret },
    ],
    SECRET_UNREADABLE: [
      {
        guard: 'firstRefusal' as const,
        target: 'blocked' as const,
        actions: [
          m.assign({ blockedRepeats: 1, reason: ({ event }) => `grant secret unreadable: ${unreadableSecret(event)}` }),
          say('error', ({ event }) => `grant secret cannot be read: ${unreadableSecret(event)}; blocked until it can (said once, repeats are counted)`),
        ],
      },
      { target: 'blocked' as const, actions: m.assign({ blockedRepeats: ({ context }) => context.blockedRepeats + 1 }) },
    ],
    SECRET_INVALID: [
      {
        guard: 'firstRefusal' as const,
        target: 'blocked' as const,
        actions: [
          m.assign({ blockedRepeats: 1, reason: ({ event }) => `grant secret unusable: ${wrongSecret(event)}` }),
          say('error', ({ event }) => `grant secret is no usable password: ${wrongSecret(event)}; blocked until it is (said once, repeats are counted)`),
        ],
      },
      { target: 'blocked' as const, actions: m.assign({ blockedRepeats: ({ context }) => context.blockedRepeats + 1 }) },
    ],
  };

  /** Applying or re-applying, when the apply failed: retried on its own backoff. */
  const failedApply = {
    target: 'retrying' as const,
    actions: [
      retried('apply'),
      say('warn', ({ context, event }) => `${context.reapplying ? 're-apply' : 'apply'} failed (${failure(event)}); retrying in ${duration(retryDelay(context.retryCount, timing))}`),
    ],
  };

  /** Applying or re-applying, when the backend refuses until someone acts: said once, not retried after a wait. */
  const refusedApply = {
    target: 'applyRefused' as const,
    actions: [
      m.assign({ reason: ({ event }) => `apply refused: ${failure(event)}`, reapplying: false }),
      say('error', ({ event }) => `apply refused by the backend (${failure(event)}); not retried until the spec changes or someone asks (holdfast reapply)`),
    ],
  };

  /** An observe-only provider's backend does not hold the consumer: reported once, not applied. */
  const observed = [
    { guard: 'sameObservation' as const, target: 'observedNotHeld' as const },
    {
      target: 'observedNotHeld' as const,
      actions: [
        m.assign({ reason: ({ event }) => observation(event), reapplying: false }),
        say('warn', ({ event }) => `${observation(event)}; its provider only observes: reported, not applied`),
      ],
    },
  ];

  /** An operator's pause: the login is left as it is, not checked until resumed. */
  const suspend = { target: 'suspended' as const, actions: because('suspended by an operator') };

  /** Resting between checks (held, could not ask, braking): asked now, applied again, given a new spec, or suspended. */
  const betweenChecks = {
    SUSPEND: suspend,
    CHECK_NOW: 'verifying' as const,
    REAPPLY: { target: 'applying' as const, actions: askedAgain },
    DESIRED: { guard: 'specChanged' as const, target: 'applying' as const, actions: specChanged },
  };

  /** Waiting to try applying again (after a failure, for a secret): applied now, with a new spec, or suspended. */
  const waitingToApply = {
    SUSPEND: suspend,
    REAPPLY: { target: 'applying' as const, actions: askedAgain },
    DESIRED: { target: 'applying' as const, actions: m.assign({ reason: 'spec changed', reapplying: false }) },
  };

  /** A wait that ends in an apply: a re-apply when the consumer was lost, else an apply. */
  const applyAgain = [{ guard: 'reapplying' as const, target: 'lost' as const }, { target: 'applying' as const }];

  /** A state entered with an effect, found mid-effect (its worker died): the effect is performed again (a test holds every such state to it). */
  const redoes = (state: string) => ({ REDO: { target: state, reenter: true } });

  return { say, because, applied, declaredAgain, retried, secretOutcomes, failedApply, refusedApply, observed, betweenChecks, waitingToApply, applyAgain, redoes };
}

/** Builds the machine for a provider's timing: the chart. */
export function createConsumerMachine(timing: ConsumerTiming) {
  const m = consumerSetup(timing);
  const { say, because, applied, declaredAgain, retried, secretOutcomes, failedApply, refusedApply, observed, betweenChecks, waitingToApply, applyAgain, redoes } = handlers(m, timing);
  return m.createMachine({
    id: 'consumer',
    // XState's `transition()` computes an initial context without input for every event: tolerate that
    context: ({ input }: { input: ConsumerInput | undefined }) => ({
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
    }),
    initial: 'pending',
    on: {
      REMOVE: { target: '.removing', actions: m.assign({ reason: 'no longer declared', retryCount: 0 }) },
      REJECT: {
        target: '.rejected',
        actions: [
          m.assign({ reason: ({ event }) => `refused by policy: ${refusal(event)}` }),
          say('error', ({ event }) => `refused by its provider's policy, not applied: ${refusal(event)}`),
        ],
      },
    },
    states: {
      pending: { on: { DESIRED: { target: 'applying', actions: because('first apply') } } },

      applying: {
        entry: 'apply',
        on: {
          ...redoes('applying'),
          APPLIED: [
            { guard: 'wasBlocked', target: 'held', actions: [say('info', ({ context }) => `grant secret readable again after ${count(context.blockedRepeats, 'refusal')}`), applied(() => 'applied')] },
            { target: 'held', actions: applied(() => 'applied') },
          ],
          APPLY_FAILED: failedApply,
          APPLY_REFUSED: refusedApply,
          NOT_APPLIED: observed,
          ...secretOutcomes,
        },
      },

      held: { after: { verify: 'verifying' }, on: betweenChecks },

      verifying: {
        entry: 'check',
        on: {
          ...redoes('verifying'),
          // the first check after an apply that finds it held changes nothing durable (it stays `applied`): no record write
          HELD: { target: 'held', actions: m.assign({ brakeCount: 0, reapplying: false, reason: ({ context }) => (context.reason === 'applied' ? 'applied' : 'held') }) },
          NOT_HELD: [
            {
              guard: 'quarantine',
              target: 'quarantined',
              actions: [
                m.assign({ reapplying: false, reason: ({ event }) => `quarantined: ${notHeld(event)}` }),
                say('error', ({ context, event }) =>
                  `rules still differ after braking at brakeMax (${duration(timing.brakeMaxMs)}) for ${duration(timing.quarantineAfterMs ?? 0)} or more, ` +
                  `${count(context.brakeCount, 'successful re-apply', 'successful re-applies')} in all (${notHeld(event)}); something keeps changing them: ` +
                  'quarantined, not applied again until someone acts (holdfast reapply, holdfast resume, or a changed spec)'),
              ],
            },
            {
              guard: 'braking',
              target: 'lost',
              actions: [
                m.assign({ reapplying: true, reason: ({ event }) => notHeld(event) }),
                say('error', ({ context, event }) =>
                  `still not held after ${count(context.brakeCount, 'successful re-apply', 'successful re-applies')} (${notHeld(event)}); ` +
                  `applying again, then braking for ${duration(brakeDelay(context.brakeCount + 1, timing))}`),
              ],
            },
            {
              target: 'lost',
              actions: [
                m.assign({ reapplying: true, reason: ({ event }) => `${notHeld(event)}${notHeldOn(event)}` }),
                // on a backend of several nodes, applied on the node(s) that lack it only
                say('warn', ({ event }) => `not held${notHeldOn(event)} (${notHeld(event)}); applying ${notHeldOn(event) === '' ? 'again' : 'there'} now`),
              ],
            },
          ],
          CHECK_FAILED: { target: 'couldNotAsk', actions: m.assign({ reason: ({ event }) => `could not ask: ${failure(event)}` }) },
          CHANGED: { target: 'applying', actions: m.assign({ reason: ({ event }) => change(event), reapplying: false }) },
          NOT_APPLIED: observed,
          ...secretOutcomes,
        },
      },

      lost: {
        entry: 'apply',
        on: {
          ...redoes('lost'),
          APPLIED: [
            {
              guard: 'braking',
              target: 'backoff',
              actions: applied(
                (c) => `applied again; ${count(c.brakeCount + 1, 're-apply', 're-applies')} without being held`,
                (c) => ({ brakeCount: c.brakeCount + 1, reapplying: true }),
              ),
            },
            { target: 'held', actions: applied(() => 'applied again', (c) => ({ brakeCount: c.brakeCount + 1 })) },
          ],
          APPLY_FAILED: failedApply,
          APPLY_REFUSED: refusedApply,
          NOT_APPLIED: observed,
          ...secretOutcomes,
        },
      },

      backoff: { after: { brake: 'verifying' }, on: betweenChecks },
      retrying: { after: { retry: applyAgain }, on: waitingToApply },
      couldNotAsk: { after: { verify: 'verifying' }, on: betweenChecks },
      waitingForSecret: { after: { secretWait: applyAgain }, on: waitingToApply },
      blocked: { after: { verify: applyAgain }, on: waitingToApply },
      rejected: { on: { DESIRED: { target: 'applying', actions: because('accepted by policy') } } },
      // an operator's pause: no check, no apply (a new spec waits); resumed, it is asked at once
      suspended: { on: { RESUME: { target: 'verifying', actions: because('resumed by an operator') } } },
      // rules that keep coming back: no check, no apply until someone acts; resumed, it is applied and the brake starts over
      quarantined: {
        on: { ...betweenChecks, RESUME: { target: 'applying', actions: m.assign({ reason: 'resumed by an operator', brakeCount: 0 }) } },
      },
      // observe only: asked again every interval by an apply that only asks (see workers/effects.ts)
      observedNotHeld: { after: { verify: 'applying' }, on: betweenChecks },

      removing: {
        tags: 'removing',
        entry: 'remove',
        on: {
          ...redoes('removing'),
          REMOVE: {},
          REMOVED: { target: 'removed', actions: because('removed') },
          REMOVE_FAILED: {
            target: 'removeRetrying',
            actions: [retried('remove'), say('warn', ({ context, event }) => `remove failed (${failure(event)}); retrying in ${duration(retryDelay(context.retryCount, timing))}`)],
          },
          REMOVE_REFUSED: {
            target: 'removeRefused',
            actions: [
              m.assign({ reason: ({ event }) => `remove refused: ${failure(event)}` }),
              say('error', ({ event }) => `remove refused by the backend (${failure(event)}); not retried until asked (holdfast reapply)`),
            ],
          },
          DESIRED: { target: 'applying', actions: declaredAgain },
        },
      },

      // no wait: trying again changes nothing until someone acts on the backend, then asks
      applyRefused: { on: waitingToApply },
      removeRefused: {
        on: {
          REMOVE: {},
          REAPPLY: { target: 'removing', actions: because('asked to remove again') },
          CHECK_NOW: { target: 'removing', actions: because('asked to remove again') },
          DESIRED: { target: 'applying', actions: declaredAgain },
        },
      },

      removeRetrying: {
        tags: 'removing',
        after: { retry: 'removing' },
        on: { REMOVE: {}, DESIRED: { target: 'applying', actions: declaredAgain } },
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
export const CHART: ConsumerMachine = createConsumerMachine({ verifyEveryMs: 1, brakeMaxMs: 1, retryBaseMs: 1, jitter: 0, secretGraceMs: 1 });
const nodes = CHART.root.states as Record<ConsumerStateName, StateNode<ConsumerContext, ConsumerEvent>>;
const statesWhere = (test: (node: StateNode<ConsumerContext, ConsumerEvent>) => boolean): ReadonlySet<ConsumerStateName> =>
  new Set((Object.keys(nodes) as ConsumerStateName[]).filter((state) => test(nodes[state])));

/** Every state of the chart. */
export const CONSUMER_STATES: ReadonlySet<ConsumerStateName> = statesWhere(() => true);

/** The chart's effects (`apply`, `check`, `remove`). */
export const EFFECTS: ReadonlySet<EffectType> = new Set(Object.keys(effects) as EffectType[]);

/** The effect a state performs as it is entered, if any. */
export function effectOf(state: ConsumerStateName): EffectType | undefined {
  return nodes[state].entry.find((action): action is EffectType => typeof action === 'string' && EFFECTS.has(action as EffectType));
}

/** States in which an effect is in flight (entered with one); a record found in one was left by a worker that died, and is redone. */
export const EFFECT_STATES: ReadonlySet<ConsumerStateName> = statesWhere((node) => effectOf(node.key as ConsumerStateName) !== undefined);

/** States tagged `tag` in the chart. */
export function statesTagged(tag: ConsumerTag): ReadonlySet<ConsumerStateName> {
  return statesWhere((node) => node.tags.includes(tag));
}

/** States of a removal under way (in flight or retrying): the consumer no longer counts as declared. */
export const REMOVING_STATES = statesTagged('removing');

/** The chart's named delays, which records and jobs name. */
export const WAIT_NAMES: readonly WaitName[] = Object.keys(CHART.implementations.delays) as WaitName[];
