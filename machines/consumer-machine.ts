/**
 * The consumer machine: one consumer's credential on one provider, from first apply to
 * removal. Pure: it performs no I/O and reads no clock. Effects (`apply`, `check`,
 * `remove`) and announcements (`say`) are actions the worker performs; waits are named
 * delays the worker turns into delayed jobs.
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
 * - `blocked`: the grant secret exists but cannot be read; said once, re-read every interval.
 * - `rejected`: the provider's policy refuses the consumer; nothing applied.
 * - `removing` / `removeRetrying` / `removed`: the consumer is no longer wanted.
 */
import { setup } from 'xstate';
import type { Announcement, ConsumerEvent } from './consumer-events.js';
import { brakeDelay, retryDelay, verifyDelay, type ConsumerTiming } from './delays.js';

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

export type ConsumerStateName =
  | 'pending'
  | 'applying'
  | 'held'
  | 'verifying'
  | 'lost'
  | 'backoff'
  | 'retrying'
  | 'couldNotAsk'
  | 'waitingForSecret'
  | 'blocked'
  | 'rejected'
  | 'removing'
  | 'removeRetrying'
  | 'removed';

/** States in which an effect is in flight; a record found in one was left by a worker that died. */
export const EFFECT_STATES: ReadonlySet<ConsumerStateName> = new Set(['applying', 'lost', 'verifying', 'removing']);

function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 6000) / 10} min`;
}

function applied(event: ConsumerEvent): Partial<ConsumerContext> {
  if (event.type !== 'APPLIED') return {};
  return {
    appliedSpecHash: event.specHash,
    appliedSecretMac: event.secretMac,
    retryCount: 0,
    secretWaits: 0,
    secretWaitedMs: 0,
    blockedRepeats: 0,
  };
}

/** Builds the machine for a provider's timing. */
export function createConsumerMachine(timing: ConsumerTiming) {
  const secretDelay = (waits: number) => retryDelay(waits, timing);
  const askAgain = { reason: 'asked to apply again', reapplying: false, brakeCount: 0 } as const;

  const m = setup({
    types: {
      context: {} as ConsumerContext,
      events: {} as ConsumerEvent,
      input: {} as ConsumerInput,
    },
    delays: {
      verify: ({ context }) => verifyDelay(context.key, timing),
      brake: ({ context }) => brakeDelay(context.brakeCount, timing),
      retry: ({ context }) => retryDelay(context.retryCount, timing),
      secretWait: ({ context }) => secretDelay(context.secretWaits),
    },
    actions: {
      apply: () => undefined,
      check: () => undefined,
      remove: () => undefined,
      say: (_, _params: Announcement) => undefined,
    },
    guards: {
      reapplying: ({ context }) => context.reapplying,
      specChanged: ({ context, event }) => event.type === 'DESIRED' && event.specHash !== context.appliedSpecHash,
      braking: ({ context }) => context.brakeCount >= 1,
      firstRefusal: ({ context }) => context.blockedRepeats === 0,
      wasBlocked: ({ context }) => context.blockedRepeats > 0,
      /** The wait that just ended took the total past the grace period. */
      secretLate: ({ context }) =>
        context.secretWaitedMs >= timing.secretGraceMs &&
        context.secretWaitedMs - secretDelay(context.secretWaits) < timing.secretGraceMs,
    },
  });

  const say = (
    level: Announcement['level'],
    message: (args: { context: ConsumerContext; event: ConsumerEvent }) => string,
  ) => ({
    type: 'say' as const,
    params: (args: { context: ConsumerContext; event: ConsumerEvent }): Announcement => ({ level, message: message(args) }),
  });

  const waitForSecret = m.assign(({ context, event }) => ({
    secretWaits: context.secretWaits + 1,
    secretWaitedMs: context.secretWaitedMs + secretDelay(context.secretWaits + 1),
    reason: event.type === 'SECRET_MISSING' ? `grant secret ${event.path} does not exist` : context.reason,
  }));

  /** What applying and re-applying do when the grant secret cannot be had. */
  const secretOutcomes = {
    SECRET_MISSING: [
      {
        guard: 'secretLate' as const,
        target: 'waitingForSecret' as const,
        actions: [
          say('warn', ({ context, event }) =>
            `grant secret ${event.type === 'SECRET_MISSING' ? event.path : ''} still does not exist after ${seconds(context.secretWaitedMs)}; not served`),
          waitForSecret,
        ],
      },
      { target: 'waitingForSecret' as const, actions: waitForSecret },
    ],
    SECRET_UNREADABLE: [
      {
        guard: 'firstRefusal' as const,
        target: 'blocked' as const,
        actions: [
          m.assign({ blockedRepeats: 1, reason: ({ event }) => (event.type === 'SECRET_UNREADABLE' ? `grant secret unreadable: ${event.detail}` : null) }),
          say('error', ({ event }) =>
            `grant secret cannot be read: ${event.type === 'SECRET_UNREADABLE' ? event.detail : ''}; blocked until it can (said once, repeats are counted)`),
        ],
      },
      { target: 'blocked' as const, actions: m.assign({ blockedRepeats: ({ context }) => context.blockedRepeats + 1 }) },
    ],
  };

  const failedApply = {
    target: 'retrying' as const,
    actions: [
      m.assign({ retryCount: ({ context }) => context.retryCount + 1, reason: ({ event }) => (event.type === 'APPLY_FAILED' ? `apply failed: ${event.error}` : null) }),
      say('warn', ({ context, event }) =>
        `${context.reapplying ? 're-apply' : 'apply'} failed (${event.type === 'APPLY_FAILED' ? event.error : ''}); retrying in ${seconds(retryDelay(context.retryCount, timing))}`),
    ],
  };

  const healedSecret = say('info', ({ context }) => `grant secret readable again after ${plural(context.blockedRepeats, 'refusal')}`);

  /** Resting between checks (held, could not ask, braking): asked now, applied again, or given a new spec. */
  const betweenChecks = {
    CHECK_NOW: 'verifying' as const,
    REAPPLY: { target: 'applying' as const, actions: m.assign(askAgain) },
    DESIRED: { guard: 'specChanged' as const, target: 'applying' as const, actions: m.assign({ reason: 'spec changed', reapplying: false, brakeCount: 0 }) },
  };

  /** Waiting to try applying again (after a failure, for a secret): applied now, or with a new spec. */
  const waitingToApply = {
    REAPPLY: { target: 'applying' as const, actions: m.assign(askAgain) },
    DESIRED: { target: 'applying' as const, actions: m.assign({ reason: 'spec changed', reapplying: false }) },
  };

  return m.createMachine({
    id: 'consumer',
    // `transition()` builds a throw-away actor for every event, whose initial context is computed
    // without input: tolerate that rather than throw (an exception per event costs a stack trace)
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
          m.assign({ reason: ({ event }) => (event.type === 'REJECT' ? `refused by policy: ${event.problems.join('; ')}` : null) }),
          say('error', ({ event }) => `refused by its provider's policy, not applied: ${event.type === 'REJECT' ? event.problems.join('; ') : ''}`),
        ],
      },
    },
    states: {
      pending: {
        on: { DESIRED: { target: 'applying', actions: m.assign({ reason: 'first apply' }) } },
      },

      applying: {
        entry: 'apply',
        on: {
          RESUME: { target: 'applying', reenter: true },
          APPLIED: [
            { guard: 'wasBlocked', target: 'held', actions: [healedSecret, m.assign(({ event }) => ({ ...applied(event), reason: 'applied' }))] },
            { target: 'held', actions: m.assign(({ event }) => ({ ...applied(event), reason: 'applied' })) },
          ],
          APPLY_FAILED: failedApply,
          ...secretOutcomes,
        },
      },

      held: {
        after: { verify: 'verifying' },
        on: betweenChecks,
      },

      verifying: {
        entry: 'check',
        on: {
          RESUME: { target: 'verifying', reenter: true },
          HELD: { target: 'held', actions: m.assign({ brakeCount: 0, reapplying: false, reason: 'held' }) },
          NOT_HELD: [
            {
              guard: 'braking',
              target: 'lost',
              actions: [
                m.assign({ reapplying: true, reason: ({ event }) => (event.type === 'NOT_HELD' ? `${event.reason}: ${event.detail}` : null) }),
                say('error', ({ context, event }) =>
                  `still not held after ${plural(context.brakeCount, 'successful re-apply', 'successful re-applies')} (${event.type === 'NOT_HELD' ? `${event.reason}: ${event.detail}` : ''}); ` +
                  `applying again, then braking for ${seconds(brakeDelay(context.brakeCount + 1, timing))}`),
              ],
            },
            {
              target: 'lost',
              actions: [
                m.assign({ reapplying: true, reason: ({ event }) => (event.type === 'NOT_HELD' ? `${event.reason}: ${event.detail}` : null) }),
                say('warn', ({ event }) => `not held (${event.type === 'NOT_HELD' ? `${event.reason}: ${event.detail}` : ''}); applying again now`),
              ],
            },
          ],
          CHECK_FAILED: {
            target: 'couldNotAsk',
            actions: m.assign({ reason: ({ event }) => (event.type === 'CHECK_FAILED' ? `could not ask: ${event.error}` : null) }),
          },
          CHANGED: {
            target: 'applying',
            actions: m.assign({ reason: ({ event }) => (event.type === 'CHANGED' ? event.what : null), reapplying: false }),
          },
          ...secretOutcomes,
        },
      },

      lost: {
        entry: 'apply',
        on: {
          RESUME: { target: 'lost', reenter: true },
          APPLIED: [
            {
              guard: 'braking',
              target: 'backoff',
              actions: m.assign(({ context, event }) => ({
                ...applied(event),
                brakeCount: context.brakeCount + 1,
                reapplying: true,
                reason: `applied again; ${plural(context.brakeCount + 1, 're-apply', 're-applies')} without being held`,
              })),
            },
            {
              target: 'held',
              actions: m.assign(({ context, event }) => ({ ...applied(event), brakeCount: context.brakeCount + 1, reason: 'applied again' })),
            },
          ],
          APPLY_FAILED: failedApply,
          ...secretOutcomes,
        },
      },

      backoff: {
        after: { brake: 'verifying' },
        on: betweenChecks,
      },

      retrying: {
        after: { retry: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: waitingToApply,
      },

      couldNotAsk: {
        after: { verify: 'verifying' },
        on: betweenChecks,
      },

      waitingForSecret: {
        after: { secretWait: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: waitingToApply,
      },

      blocked: {
        after: { verify: [{ guard: 'reapplying', target: 'lost' }, { target: 'applying' }] },
        on: waitingToApply,
      },

      rejected: {
        on: { DESIRED: { target: 'applying', actions: m.assign({ reason: 'accepted by policy' }) } },
      },

      removing: {
        entry: 'remove',
        on: {
          RESUME: { target: 'removing', reenter: true },
          REMOVE: {},
          REMOVED: { target: 'removed', actions: m.assign({ reason: 'removed' }) },
          REMOVE_FAILED: {
            target: 'removeRetrying',
            actions: [
              m.assign({
                retryCount: ({ context }) => context.retryCount + 1,
                reason: ({ event }) => (event.type === 'REMOVE_FAILED' ? `remove failed: ${event.error}` : null),
              }),
              say('warn', ({ context, event }) =>
                `remove failed (${event.type === 'REMOVE_FAILED' ? event.error : ''}); retrying in ${seconds(retryDelay(context.retryCount, timing))}`),
            ],
          },
          DESIRED: { target: 'applying', actions: m.assign({ reason: 'declared again', retryCount: 0 }) },
        },
      },

      removeRetrying: {
        after: { retry: 'removing' },
        on: {
          REMOVE: {},
          DESIRED: { target: 'applying', actions: m.assign({ reason: 'declared again', retryCount: 0 }) },
        },
      },

      removed: { type: 'final' },
    },
  });
}

export type ConsumerMachine = ReturnType<typeof createConsumerMachine>;
