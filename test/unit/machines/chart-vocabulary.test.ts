/**
 * The engine's vocabulary of the chart (states, effects, effect states, waits, tags) is read
 * off the chart; these hold the chart to what the engine does with it: a state entered with an
 * effect is redone when found mid-effect, and only such a state; every wait ends by its name.
 */
import { transition, type StateNode } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  CHART,
  CONSUMER_STATES,
  createConsumerMachine,
  EFFECT_STATES,
  EFFECTS,
  effectOf,
  REMOVING_STATES,
  WAIT_NAMES,
  type ConsumerContext,
  type ConsumerMachine,
  type ConsumerStateName,
} from '../../../machines/consumer-machine.js';
import { step, waitEnded } from '../../../machines/machine-step.js';

const context: ConsumerContext = {
  key: 'cache/app-a',
  appliedSpecHash: 's',
  appliedSecretMac: 'm',
  brakeCount: 2,
  retryCount: 1,
  reapplying: true,
  secretWaits: 1,
  secretWaitedMs: 1000,
  blockedRepeats: 1,
  reason: null,
};
const timing = { verifyEveryMs: 60_000, brakeMaxMs: 3_600_000, retryBaseMs: 1000, jitter: 0.1, secretGraceMs: 60_000 };
const machine = createConsumerMachine(timing);
const states = [...CONSUMER_STATES];
const node = (m: ConsumerMachine, state: ConsumerStateName) => (m.root.states as Record<string, StateNode>)[state]!;
const at = (state: ConsumerStateName) => machine.resolveState({ value: state, context });

/** Every action the chart names (strings and `{ type }` objects; assignments are functions). */
function namedActions(m: ConsumerMachine): Set<string> {
  const names = new Set<string>();
  const add = (actions: readonly unknown[]) => {
    for (const action of actions) {
      if (typeof action === 'string') names.add(action);
      else if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string')
        names.add((action as { type: string }).type);
    }
  };
  for (const n of [m.root, ...Object.values(m.root.states as Record<string, StateNode>)]) {
    add(n.entry);
    for (const transitions of n.transitions.values()) for (const t of transitions) add(t.actions);
  }
  return names;
}

describe('the chart and the vocabulary read off it', () => {
  it('a state found mid-effect is redone (REDO re-enters it, performing its effect again) exactly when it is entered with an effect', () => {
    const redone = states.filter((state) => {
      const [next, actions] = transition(machine, at(state), { type: 'REDO' });
      return next.value === state && actions.some((a) => a.type === effectOf(state));
    });
    expect(redone.sort()).toEqual([...EFFECT_STATES].sort());
    expect([...EFFECT_STATES].sort()).toEqual(['applying', 'checking', 'lost', 'removing']);
    // and REDO does nothing anywhere else
    for (const state of states.filter((s) => !EFFECT_STATES.has(s)))
      expect(transition(machine, at(state), { type: 'REDO' })[1]).toEqual([]);
  });

  it('names as effects every action the chart asks the worker for, and every effect is some state’s', () => {
    expect([...namedActions(machine)].filter((name) => name !== 'say').sort()).toEqual([...EFFECTS].sort());
    expect(new Set(states.map(effectOf).filter(Boolean))).toEqual(EFFECTS);
  });

  it('names as waits the delays the chart defines, each used by a state, and ends each by its name', () => {
    expect([...WAIT_NAMES].sort()).toEqual(Object.keys(machine.implementations.delays).sort());
    const used = new Set<string>();
    for (const state of states) {
      for (const { delay } of node(machine, state).after) {
        expect(WAIT_NAMES).toContain(delay);
        used.add(String(delay));
        const ended = step(machine, at(state), waitEnded(delay as (typeof WAIT_NAMES)[number], state));
        expect(ended.snapshot.value).not.toBe(state); // every wait of the chart leads elsewhere
      }
      // a wait the state does not have is ignored
      for (const other of WAIT_NAMES.filter((w) => !node(machine, state).after.some((t) => t.delay === w))) {
        expect(step(machine, at(state), waitEnded(other, state))).toMatchObject({
          effect: undefined,
          wait: undefined,
          said: [],
        });
      }
    }
    expect([...used].sort()).toEqual([...WAIT_NAMES].sort());
  });

  it('a step into a state that waits reports its wait by the chart’s name', () => {
    const events = [
      { type: 'APPLIED', specHash: 's', secretMac: 'm' },
      { type: 'APPLY_FAILED', error: 'e' },
      { type: 'REMOVE_FAILED', error: 'e' },
      { type: 'CHECK_FAILED', error: 'e', timedOut: false },
      { type: 'SECRET_MISSING', path: '/s' },
      { type: 'SECRET_UNREADABLE', detail: 'EACCES' },
      { type: 'NOT_APPLIED', reason: 'missing', detail: 'd' },
      { type: 'HELD' },
    ] as const;
    const entered = new Set<ConsumerStateName>();
    for (const from of states) {
      for (const event of events) {
        const moved = step(machine, at(from), event);
        const to = moved.snapshot.value;
        if (to === from || node(machine, to).after.length === 0) continue;
        entered.add(to);
        expect(node(machine, to).after.map((t) => t.delay)).toContain(moved.wait?.name);
      }
    }
    expect([...entered].sort()).toEqual(states.filter((state) => node(machine, state).after.length > 0).sort());
  });

  it('tags removals under way', () => {
    expect([...REMOVING_STATES].sort()).toEqual(['removeRetrying', 'removing']);
  });

  it('is the same for every timing: timing sets how long waits are, not which there are', () => {
    const other = createConsumerMachine({
      verifyEveryMs: 5000,
      brakeMaxMs: 10_000,
      retryBaseMs: 50,
      jitter: 0.5,
      secretGraceMs: 1,
      quarantineAfterMs: 0,
    });
    const shape = (m: ConsumerMachine) =>
      states.map((state) => {
        const n = node(m, state);
        return {
          state,
          tags: n.tags,
          entry: n.entry.filter((a) => typeof a === 'string'),
          waits: n.after.map((t) => [t.delay, t.eventType]),
          events: [...n.transitions.keys()],
        };
      });
    expect(Object.keys(other.root.states).sort()).toEqual(Object.keys(CHART.root.states).sort());
    expect(shape(other)).toEqual(shape(CHART));
    expect(shape(machine)).toEqual(shape(CHART));
  });
});
