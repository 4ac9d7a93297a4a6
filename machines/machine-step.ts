/**
 * How the engine drives the consumer machine, one event at a time, and the persisted form of
 * a consumer. Everything outside `machines/` works with {@link Step}s, {@link Wait}s and
 * {@link PersistedConsumer}s, and stores none of XState's names; what this needs of XState
 * beyond its documented surface is in `xstate-internals.ts`.
 */
import { initialTransition, type SnapshotFrom } from 'xstate';
import type { Announcement, ConsumerEvent } from './consumer-events.js';
import {
  CHART,
  CONSUMER_STATES,
  EFFECTS,
  WAIT_NAMES,
  type ConsumerContext,
  type ConsumerMachine,
  type ConsumerStateName,
  type EffectType,
  type WaitName,
} from './consumer-machine.js';
import { currentStateOf } from './former-states.js';
import { delayedEvents, transitionOnce, waitEndEvent, type DelayedEvents } from './xstate-internals.js';

/**
 * The version of the chart that wrote a persisted consumer. Raise it when states or context change, and migrate in
 * {@link readPersisted}. Version 3 renamed a state (`former-states.ts`).
 */
export const MACHINE_VERSION = 3;

/** A consumer as its record keeps it: the state and the context; never a secret. */
export interface PersistedConsumer {
  state: ConsumerStateName;
  context: ConsumerContext;
}

/** The chart's named delays (`setup({ delays })`), which records and jobs name. */
export { WAIT_NAMES, type EffectType, type WaitName };

/** A wait the machine asked for: after `ms`, the wait named `name` ends. */
export interface Wait {
  name: WaitName;
  ms: number;
}

export type ConsumerSnapshot = SnapshotFrom<ConsumerMachine>;

/** What one event did to a consumer. */
export interface Step {
  snapshot: ConsumerSnapshot;
  /** The effect the new state asks the worker to perform, if any (at most one per step). */
  effect: EffectType | undefined;
  /** The wait the new state asks for; `null` when the step cancelled the wait; `undefined` when it left it alone. */
  wait: Wait | null | undefined;
  /** What the log must say, in order. */
  said: Announcement[];
}

/** Each machine's wait-ending events, read off its chart once. */
const delayed = new WeakMap<ConsumerMachine, DelayedEvents>();

function delayedOf(machine: ConsumerMachine): DelayedEvents {
  let found = delayed.get(machine);
  if (!found) delayed.set(machine, (found = delayedEvents(machine)));
  return found;
}

/** The first snapshot of a newly declared consumer. */
export function firstSnapshot(machine: ConsumerMachine, key: string): ConsumerSnapshot {
  return initialTransition(machine, { key })[0];
}

/** The consumer as its record keeps it. */
export function persist(snapshot: ConsumerSnapshot): PersistedConsumer {
  return { state: snapshot.value, context: snapshot.context };
}

export function restore(machine: ConsumerMachine, consumer: PersistedConsumer): ConsumerSnapshot {
  return machine.resolveState({ value: consumer.state, context: consumer.context });
}

/** True when two persisted consumers are the same: nothing to write. */
export function samePersisted(a: PersistedConsumer, b: PersistedConsumer): boolean {
  if (a.state !== b.state) return false;
  const left = a.context as unknown as Record<string, unknown>;
  const right = b.context as unknown as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => left[key] === right[key]);
}

/** Feeds one event to the machine. */
export function step(machine: ConsumerMachine, snapshot: ConsumerSnapshot, event: ConsumerEvent): Step {
  const { next, actions } = transitionOnce(machine, snapshot, event);
  const out: Step = { snapshot: next, effect: undefined, wait: undefined, said: [] };
  for (const action of actions) {
    if (action.kind === 'cancelled') out.wait = null;
    else if (action.kind === 'delayed') {
      const name = delayedOf(machine).waitOf(action.event);
      if (name !== undefined) out.wait = { name: name as WaitName, ms: action.ms };
    } else if (action.type === 'say') out.said.push(action.params as Announcement);
    else if (EFFECTS.has(action.type as EffectType)) out.effect = action.type as EffectType;
  }
  return out;
}

/** The event no state handles: a wait ended for a state that has no such wait. */
const NO_SUCH_WAIT = 'holdfast.noSuchWait';

/** The event that ends the wait `name` of a consumer resting in `state` (a state without that wait ignores it). */
export function waitEnded(name: WaitName, state: ConsumerStateName): ConsumerEvent {
  return waitEndEvent(delayedOf(CHART).eventOf(name, state) ?? NO_SUCH_WAIT);
}

/**
 * A stored consumer in this chart's terms: migrated from the version that wrote it, or a
 * sentence saying why it cannot be read. Version 1 (unversioned records) kept XState's whole
 * persisted snapshot (`value`, `context`, `status`…); versions 1 and 2 named some states as earlier releases did
 * (`former-states.ts`).
 */
export function readPersisted(
  version: number | undefined,
  stored: unknown,
): { consumer: PersistedConsumer } | { problem: string } {
  const v = version ?? 1;
  if (v < 1 || v > MACHINE_VERSION)
    return { problem: `written by machine version ${v}; this holdfast reads versions 1 to ${MACHINE_VERSION}` };
  const { value, state, context } = (typeof stored === 'object' && stored !== null ? stored : {}) as {
    value?: unknown;
    state?: unknown;
    context?: unknown;
  };
  const name = v < 3 ? currentStateOf(v === 1 ? value : state) : state;
  if (typeof name !== 'string' || !CONSUMER_STATES.has(name as ConsumerStateName))
    return { problem: `no state ${JSON.stringify(name)} in machine version ${v}` };
  if (typeof context !== 'object' || context === null)
    return { problem: `no context in a machine version ${v} record` };
  return { consumer: { state: name as ConsumerStateName, context: context as ConsumerContext } };
}
