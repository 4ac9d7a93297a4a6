/**
 * How the engine drives the consumer machine, one event at a time: the one place that knows
 * XState's internal names (the `xstate.raise` and `xstate.cancel` actions, the
 * `xstate.after.<delay>.consumer.<state>` events) and the persisted form of a consumer.
 * Everything outside `machines/` works with {@link Step}s, {@link Wait}s and
 * {@link PersistedConsumer}s, and stores none of XState's names.
 */
import { createActor, initialTransition, type ActorScope, type ExecutableActionObject, type SnapshotFrom } from 'xstate';
import type { Announcement, ConsumerEvent, EffectType } from './consumer-events.js';
import { CONSUMER_STATES, type ConsumerContext, type ConsumerMachine, type ConsumerStateName } from './consumer-machine.js';

/** The version of the chart that wrote a persisted consumer. Raise it when states or context change, and migrate in {@link readPersisted}. */
export const MACHINE_VERSION = 2;

/** A consumer as its record keeps it: the state and the context; never a secret. */
export interface PersistedConsumer {
  state: ConsumerStateName;
  context: ConsumerContext;
}

/** The chart's named delays (`setup({ delays })`), which records and jobs name; a test holds them equal. */
export const WAIT_NAMES = ['verify', 'brake', 'retry', 'secretWait'] as const;
export type WaitName = (typeof WAIT_NAMES)[number];

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

const EFFECTS: ReadonlySet<string> = new Set<EffectType>(['apply', 'check', 'remove']);
const WAITS: ReadonlySet<string> = new Set<string>(WAIT_NAMES);
const AFTER = /^xstate\.after\.([A-Za-z]+)\.consumer\.[A-Za-z]+$/;

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

interface Scope {
  scope: ActorScope<ConsumerSnapshot, ConsumerEvent>;
  actions: ExecutableActionObject[];
}

const scopes = new WeakMap<ConsumerMachine, Scope>();

/**
 * An inert actor scope for `machine`, made once: its action executor only collects. XState's
 * own `transition()` does the same, but builds a new actor (and its initial snapshot) for
 * every event, which costs a routine check more than the rest of the machine's work.
 */
function scopeOf(machine: ConsumerMachine): Scope {
  let found = scopes.get(machine);
  if (!found) {
    const actions: ExecutableActionObject[] = [];
    const self = createActor(machine, { input: { key: '' } });
    const scope: ActorScope<ConsumerSnapshot, ConsumerEvent> = {
      self,
      id: '',
      sessionId: '',
      logger: () => undefined,
      defer: () => undefined,
      emit: () => undefined,
      system: self.system,
      stopChild: () => undefined,
      actionExecutor: (action) => {
        actions.push(action);
      },
    };
    found = { scope, actions };
    scopes.set(machine, found);
  }
  return found;
}

/** Feeds one event to the machine. */
export function step(machine: ConsumerMachine, snapshot: ConsumerSnapshot, event: ConsumerEvent): Step {
  const { scope, actions: collected } = scopeOf(machine);
  collected.length = 0;
  const next = machine.transition(snapshot, event, scope);
  const actions = collected.splice(0);
  const out: Step = { snapshot: next, effect: undefined, wait: undefined, said: [] };
  for (const action of actions) {
    const type: string = action.type;
    if (type === 'say') out.said.push(action.params as Announcement);
    else if (type === 'xstate.cancel') out.wait = null;
    else if (type === 'xstate.raise') {
      const params = action.params as { event: { type: string }; delay?: number };
      const name = AFTER.exec(params.event.type)?.[1];
      if (params.delay !== undefined && name !== undefined && WAITS.has(name)) out.wait = { name: name as WaitName, ms: params.delay };
    } else if (EFFECTS.has(type)) out.effect = type as EffectType;
  }
  return out;
}

/** The event that ends the wait `name` of a consumer resting in `state`. */
export function waitEnded(name: WaitName, state: ConsumerStateName): ConsumerEvent {
  return { type: `xstate.after.${name}.consumer.${state}` } as unknown as ConsumerEvent;
}

/**
 * A stored consumer in this chart's terms: migrated from the version that wrote it, or a
 * sentence saying why it cannot be read. Version 1 (unversioned records) kept XState's whole
 * persisted snapshot (`value`, `context`, `status`…).
 */
export function readPersisted(version: number | undefined, stored: unknown): { consumer: PersistedConsumer } | { problem: string } {
  const v = version ?? 1;
  if (v < 1 || v > MACHINE_VERSION) return { problem: `written by machine version ${v}; this holdfast reads versions 1 to ${MACHINE_VERSION}` };
  const { value, state, context } = (typeof stored === 'object' && stored !== null ? stored : {}) as { value?: unknown; state?: unknown; context?: unknown };
  const name = v === 1 ? value : state;
  if (typeof name !== 'string' || !CONSUMER_STATES.has(name as ConsumerStateName)) return { problem: `no state ${JSON.stringify(name)} in machine version ${v}` };
  if (typeof context !== 'object' || context === null) return { problem: `no context in a machine version ${v} record` };
  return { consumer: { state: name as ConsumerStateName, context: context as ConsumerContext } };
}
