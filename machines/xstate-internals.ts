/**
 * What holdfast uses of XState beyond `setup`, `createMachine` and snapshots, in one place, so
 * that an XState upgrade is checked here and nowhere else:
 *
 * - an **inert actor scope**, made once per machine: XState's pure `transition()` makes an actor
 *   (and its initial snapshot) for every event, which costs a routine check more than the rest
 *   of the machine's work; this scope is the one `transition()` makes, kept;
 * - the **built-in actions** a transition yields: `xstate.raise` with a delay (a wait asked
 *   for, by the event XState will raise when it ends) and `xstate.cancel` (a wait dropped);
 * - the **events that end waits**, read off each state's delayed transitions
 *   (`StateNode.after`), never spelled from XState's naming scheme;
 * - such an event as the machine's own event type: XState types only the chart's events.
 */
import {
  createActor,
  type ActorScope,
  type ExecutableActionObject,
  type SnapshotFrom,
  type SpecialExecutableAction,
  type StateNode,
} from 'xstate';
import type { ConsumerEvent } from './consumer-events.js';
import type { ConsumerMachine, ConsumerStateName } from './consumer-machine.js';

/** A snapshot of the chart, as `machine-step.ts` names it (which imports this file, so not the other way). */
type ConsumerSnapshot = SnapshotFrom<ConsumerMachine>;

/** One action a transition yielded, in the terms holdfast reads. */
export type YieldedAction =
  /** A wait asked for: XState raises `event` after `ms`. */
  | { kind: 'delayed'; event: string; ms: number }
  /** A wait dropped (its state was left). */
  | { kind: 'cancelled' }
  /** One of the chart's own actions, with its parameters. */
  | { kind: 'named'; type: string; params: unknown };

interface Inert {
  scope: ActorScope<ConsumerSnapshot, ConsumerEvent>;
  collected: ExecutableActionObject[];
}

const inert = new WeakMap<ConsumerMachine, Inert>();

/** The inert actor scope of `machine`, made once: its action executor only collects. */
function inertScope(machine: ConsumerMachine): Inert {
  let found = inert.get(machine);
  if (!found) {
    const collected: ExecutableActionObject[] = [];
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
        collected.push(action);
      },
    };
    found = { scope, collected };
    inert.set(machine, found);
  }
  return found;
}

function yielded(action: ExecutableActionObject): YieldedAction {
  if (action.type === 'xstate.cancel') return { kind: 'cancelled' };
  if (action.type === 'xstate.raise') {
    // XState's ExecutableRaiseAction: `delay` resolved to milliseconds, undefined for a raise without one
    const { event, delay } = (action as Extract<SpecialExecutableAction, { type: 'xstate.raise' }>).params;
    if (delay !== undefined) return { kind: 'delayed', event: event.type, ms: delay };
  }
  return { kind: 'named', type: action.type, params: action.params };
}

/** Feeds one event to the machine: the next snapshot and the actions the transition yielded, unexecuted. */
export function transitionOnce(
  machine: ConsumerMachine,
  snapshot: ConsumerSnapshot,
  event: ConsumerEvent,
): { next: ConsumerSnapshot; actions: YieldedAction[] } {
  const { scope, collected } = inertScope(machine);
  collected.length = 0;
  const next = machine.transition(snapshot, event, scope);
  return { next, actions: collected.splice(0).map(yielded) };
}

/** The events that end each state's waits, and the wait each such event ends, read off the chart. */
export interface DelayedEvents {
  /** The event that ends the wait `wait` of `state`; undefined when the state has no such wait. */
  eventOf(wait: string, state: ConsumerStateName): string | undefined;
  /** The wait an event ends; undefined for any other event. */
  waitOf(event: string): string | undefined;
}

export function delayedEvents(machine: ConsumerMachine): DelayedEvents {
  const byState = new Map<string, Map<string, string>>();
  const byEvent = new Map<string, string>();
  for (const [state, node] of Object.entries(machine.root.states as Record<string, StateNode>)) {
    const waits = new Map<string, string>();
    for (const { delay, eventType } of node.after) {
      if (typeof delay !== 'string') continue; // holdfast's waits are all named
      waits.set(delay, eventType);
      byEvent.set(eventType, delay);
    }
    byState.set(state, waits);
  }
  return { eventOf: (wait, state) => byState.get(state)?.get(wait), waitOf: (event) => byEvent.get(event) };
}

/** An event ending a wait, typed as the machine's: XState's types know only the chart's own events. */
export function waitEndEvent(type: string): ConsumerEvent {
  return { type } as ConsumerEvent;
}
