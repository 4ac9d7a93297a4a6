/**
 * The chart's answers kept and reused (`machines/step-memo.ts`) are the chart's answers: over
 * random histories of random consumers, on machines of different timings, a kept answer is what
 * stepping the chart gives (the persisted consumer, the effect, what is said, the wait and its
 * length), and a held consumer's routine check, once returned for one consumer, is returned for
 * the next without stepping the chart.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { ConsumerEvent } from '../../../machines/consumer-events.js';
import { createConsumerMachine } from '../../../machines/consumer-machine.js';
import { verifyDelay, type ConsumerTiming } from '../../../machines/delays.js';
import {
  firstSnapshot,
  persist,
  restore,
  step,
  waitEnded,
  WAIT_NAMES,
  type PersistedConsumer,
  type WaitName,
} from '../../../machines/machine-step.js';
import { keptAsStep, memoStep, restingAt } from '../../../machines/step-memo.js';

const timings: ConsumerTiming[] = [
  { verifyEveryMs: 60_000, brakeMaxMs: 3_600_000, retryBaseMs: 1000, jitter: 0.1, secretGraceMs: 60_000 },
  {
    verifyEveryMs: 5_000,
    brakeMaxMs: 40_000,
    retryBaseMs: 300,
    jitter: 0.5,
    secretGraceMs: 2_000,
    quarantineAfterMs: 80_000,
  },
];
const machines = timings.map((timing) => createConsumerMachine(timing));

/** An event of a history: a wait's end is named, and made for the state the consumer is in when it comes. */
type Happening = { wait: WaitName } | { event: ConsumerEvent };

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const spec = pick('spec-1', 'spec-2', 'spec-3');
const mac = pick('mac-1', 'mac-2', 'mac-3');
const words = pick('refused', 'timed out', 'connection reset');
const result: fc.Arbitrary<ConsumerEvent> = fc.oneof(
  fc.record({ type: fc.constant('APPLIED' as const), specHash: spec, secretMac: mac }),
  fc.record(
    { type: fc.constant('APPLY_FAILED' as const), error: words, timedOut: fc.boolean() },
    {
      requiredKeys: ['type', 'error'],
    },
  ),
  fc.record({ type: fc.constant('APPLY_REFUSED' as const), error: words }),
  fc.record({ type: fc.constant('HELD' as const), secretMac: mac }, { requiredKeys: ['type'] }),
  fc.record(
    {
      type: fc.constant('NOT_HELD' as const),
      reason: pick('missing', 'rules-differ', 'password-differs'),
      detail: words,
      node: pick('10.0.0.6:6379', '10.0.0.7:6379'),
    },
    { requiredKeys: ['type', 'reason', 'detail'] },
  ),
  fc.record({ type: fc.constant('NOT_APPLIED' as const), reason: pick('missing', 'rules-differ'), detail: words }),
  fc.record({ type: fc.constant('CHECK_FAILED' as const), error: words, timedOut: fc.boolean() }),
  fc.record({ type: fc.constant('CHANGED' as const), what: pick('grant secret rotated', 'spec changed') }),
  fc.record({ type: fc.constant('SECRET_MISSING' as const), path: pick('/grants/a.secret', '/grants/b.secret') }),
  fc.record({ type: fc.constant('SECRET_UNREADABLE' as const), detail: words }),
  fc.record({ type: fc.constant('SECRET_INVALID' as const), detail: words }),
  fc.record({ type: fc.constant('REMOVED' as const) }),
  fc.record({ type: fc.constant('REMOVE_FAILED' as const), error: words }),
  fc.record({ type: fc.constant('REMOVE_REFUSED' as const), error: words }),
);
const command: fc.Arbitrary<ConsumerEvent> = fc.oneof(
  fc.record({ type: fc.constant('DESIRED' as const), specHash: spec }),
  fc.record({ type: fc.constant('REJECT' as const), problems: fc.array(words, { maxLength: 2 }) }),
  pick<ConsumerEvent>(
    { type: 'REMOVE' },
    { type: 'CHECK_NOW' },
    { type: 'REAPPLY' },
    { type: 'REDO' },
    { type: 'SUSPEND' },
    { type: 'RESUME' },
  ),
);
const happening: fc.Arbitrary<Happening> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ wait: pick(...WAIT_NAMES) }) },
  { weight: 3, arbitrary: pick<Happening>({ event: { type: 'HELD' } }) },
  { weight: 4, arbitrary: result.map((event) => ({ event })) },
  { weight: 2, arbitrary: command.map((event) => ({ event })) },
);
const history = fc.record({
  machine: fc.nat({ max: machines.length - 1 }),
  key: fc.string({ minLength: 1, maxLength: 10 }).map((id) => `cache/${id}`),
  happenings: fc.array(happening, { minLength: 1, maxLength: 40 }),
});

/** The consumer as a ticket carries it: through JSON, as the queue gives it back. */
const carried = (consumer: PersistedConsumer) => JSON.parse(JSON.stringify(consumer)) as PersistedConsumer;

describe('a kept answer', () => {
  it('is what stepping the chart gives, for any consumer and any history', () => {
    fc.assert(
      fc.property(fc.array(history, { minLength: 1, maxLength: 4 }), (histories) => {
        for (const { machine: which, key, happenings } of histories) {
          const machine = machines[which]!;
          let snapshot = firstSnapshot(machine, key);
          for (const happened of happenings) {
            const event = 'wait' in happened ? waitEnded(happened.wait, snapshot.value) : happened.event;
            const from = carried(persist(snapshot));
            const real = step(machine, restore(machine, from), event);
            expect(memoStep(machine, from, event)).toStrictEqual({
              consumer: persist(real.snapshot),
              effect: real.effect,
              wait: real.wait,
              said: real.said,
            });
            snapshot = real.snapshot;
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("answers a held consumer's routine check for another consumer without stepping the chart, in that consumer's terms", () => {
    const machine = createConsumerMachine(timings[0]!);
    const held = (key: string) => {
      let snapshot = firstSnapshot(machine, key);
      for (const event of [
        { type: 'DESIRED', specHash: 'spec-1' },
        { type: 'APPLIED', specHash: 'spec-1', secretMac: 'mac-1' },
      ] as ConsumerEvent[])
        snapshot = step(machine, snapshot, event).snapshot;
      return carried(persist(snapshot));
    };
    const routine = (from: PersistedConsumer) => {
      const ended = memoStep(machine, from, waitEnded('verify', from.state));
      return memoStep(machine, ended.consumer, { type: 'HELD' });
    };
    const [a, b] = [held('cache/app-a'), held('cache/app-b')];
    routine(a);
    const transition = vi.spyOn(machine, 'transition');
    const returned = routine(b);
    expect(transition).not.toHaveBeenCalled();
    expect(returned).toStrictEqual({
      consumer: b,
      effect: undefined,
      wait: { name: 'verify', ms: verifyDelay('cache/app-b', timings[0]!) },
      said: [],
    });
    expect(verifyDelay('cache/app-b', timings[0]!)).not.toBe(verifyDelay('cache/app-a', timings[0]!));
  });

  it("answers a held consumer's routine check for consumers applied with fingerprints of their own", () => {
    const machine = createConsumerMachine(timings[1]!);
    const held = (key: string, spec: string, mac: string) => {
      let snapshot = firstSnapshot(machine, key);
      for (const event of [
        { type: 'DESIRED', specHash: spec },
        { type: 'APPLIED', specHash: spec, secretMac: mac },
      ] as ConsumerEvent[])
        snapshot = step(machine, snapshot, event).snapshot;
      return carried(persist(snapshot));
    };
    const routine = (from: PersistedConsumer, secretMac?: string) => {
      const ended = memoStep(machine, from, waitEnded('verify', from.state));
      return memoStep(
        machine,
        ended.consumer,
        secretMac === undefined ? { type: 'HELD' } : { type: 'HELD', secretMac },
      );
    };
    routine(held('cache/app-a', 'spec-a', 'mac-a'));
    routine(held('cache/app-a', 'spec-a', 'mac-a'), 'mac-a');
    const transition = vi.spyOn(machine, 'transition');
    const consumers = Array.from({ length: 50 }, (_, i) => held(`cache/app-${i}`, `spec-${i}`, `mac-${i}`));
    transition.mockClear();
    const returned = consumers.map((c) => routine(c));
    const learned = consumers.map((c, i) => routine(c, `mac-${i}`));
    expect(transition).not.toHaveBeenCalled();
    expect(returned.map((a) => a.consumer)).toStrictEqual(consumers);
    expect(learned.map((a) => a.consumer)).toStrictEqual(consumers);
    expect(returned[7]!.wait).toStrictEqual({ name: 'verify', ms: verifyDelay('cache/app-7', timings[1]!) });
  });

  it('tells a fingerprint that changed from one that did not, whatever their values', () => {
    const machine = createConsumerMachine(timings[0]!);
    const events: ConsumerEvent[] = [];
    for (const spec of ['spec-1', 'spec-2', 'spec-3'])
      events.push(
        { type: 'DESIRED', specHash: spec },
        { type: 'APPLIED', specHash: spec, secretMac: `mac-of-${spec}` },
      );
    for (const applied of ['spec-1', 'spec-2', 'spec-3']) {
      let snapshot = firstSnapshot(machine, `cache/${applied}`);
      for (const event of [events[0]!, { type: 'APPLIED', specHash: applied, secretMac: 'mac-1' }] as ConsumerEvent[])
        snapshot = step(machine, snapshot, event).snapshot;
      const from = carried(persist(snapshot));
      for (const event of events) {
        const real = step(machine, restore(machine, from), event);
        expect(memoStep(machine, from, event)).toStrictEqual({
          consumer: persist(real.snapshot),
          effect: real.effect,
          wait: real.wait,
          said: real.said,
        });
      }
    }
  });

  /** A consumer applied with `spec-1` and `mac-1`, held, as its ticket carries it. */
  const heldOn = (machine: ReturnType<typeof createConsumerMachine>, key: string) => {
    let snapshot = firstSnapshot(machine, key);
    for (const event of [
      { type: 'DESIRED', specHash: 'spec-1' },
      { type: 'APPLIED', specHash: 'spec-1', secretMac: 'mac-1' },
    ] as ConsumerEvent[])
      snapshot = step(machine, snapshot, event).snapshot;
    return carried(persist(snapshot));
  };
  /** A heal's events after its wait's end: the loss found, the apply, its confirmation asked and found held. */
  const healEvents = (detail: string): ConsumerEvent[] => [
    { type: 'NOT_HELD', reason: 'missing', detail, node: '10.0.0.6:6379' },
    { type: 'APPLIED', specHash: 'spec-1', secretMac: 'mac-1' },
    { type: 'CHECK_NOW' },
    { type: 'HELD' },
  ];

  it("answers a heal's steps for another consumer without stepping the chart, as stepping gives, its snapshot restored when read", () => {
    const machine = createConsumerMachine(timings[0]!);
    const heal = (from: PersistedConsumer) => {
      const steps = [memoStep(machine, from, waitEnded('verify', from.state))];
      for (const event of healEvents('the backend has no such ACL user'))
        steps.push(memoStep(machine, steps[steps.length - 1]!.consumer, event));
      return steps.map((kept) => keptAsStep(machine, kept));
    };
    heal(heldOn(machine, 'cache/app-a'));
    const b = heldOn(machine, 'cache/app-b');
    const transition = vi.spyOn(machine, 'transition');
    const returned = heal(b);
    expect(transition).not.toHaveBeenCalled();
    transition.mockRestore();
    let real = restore(machine, b);
    const events = [waitEnded('verify', b.state), ...healEvents('the backend has no such ACL user')];
    expect(returned.map((a) => a.consumer.state)).toEqual(['checking', 'lost', 'held', 'checking', 'held']);
    events.forEach((event, i) => {
      const stepped = step(machine, real, event);
      const { consumer, effect, wait, said, snapshot } = returned[i]!;
      expect({ consumer, effect, wait, said }).toStrictEqual({
        consumer: persist(stepped.snapshot),
        effect: stepped.effect,
        wait: stepped.wait,
        said: stepped.said,
      });
      expect(persist(snapshot)).toStrictEqual(persist(stepped.snapshot));
      real = stepped.snapshot;
    });
    expect(persist(restingAt(machine, b).snapshot)).toStrictEqual(b);
  });
});
