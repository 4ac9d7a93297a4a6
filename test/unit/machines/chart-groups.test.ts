/**
 * States that answer an event alike share a group the chart writes once (`betweenChecks`,
 * `waitingToApply`, `secretOrObserved`, `applyFailures`); these hold that they still answer alike,
 * whatever a state adds after its spread (the resting states between checks, the states waiting to
 * apply, the states that apply and read the grant secret).
 */
import type { StateNode } from 'xstate';
import { describe, expect, it } from 'vitest';
import { CHART, type ConsumerStateName } from '../../../machines/consumer-machine.js';

const node = (state: ConsumerStateName) => (CHART.root.states as Record<string, StateNode>)[state]!;

/** How `state` answers `event`: each transition's guard, targets, re-entry and actions. */
function answers(state: ConsumerStateName, event: string) {
  return (node(state).transitions.get(event) ?? []).map((t) => ({
    guard: t.guard,
    targets: (t.target ?? []).map((n) => n.id),
    reenter: t.reenter,
    actions: t.actions,
  }));
}

function alike(states: ConsumerStateName[], events: string[]): void {
  for (const event of events) {
    const first = answers(states[0]!, event);
    expect(first, `${states[0]} answers ${event}`).not.toEqual([]);
    for (const state of states.slice(1))
      expect(answers(state, event), `${state} answers ${event} as ${states[0]} does`).toEqual(first);
  }
}

describe('states that answer alike', () => {
  it('resting between checks: suspended, asked now, applied again, or given a new spec', () => {
    alike(
      ['held', 'backoff', 'couldNotAsk', 'quarantined', 'observedNotHeld'],
      ['SUSPEND', 'CHECK_NOW', 'REAPPLY', 'DESIRED'],
    );
  });

  it('waiting to apply: suspended, applied now, or with a new spec', () => {
    alike(['retrying', 'waitingForSecret', 'blocked', 'applyRefused'], ['SUSPEND', 'REAPPLY', 'DESIRED']);
  });

  it('applying, re-applying or checking: an observe-only backend, and a grant secret that cannot be had', () => {
    alike(['applying', 'checking', 'lost'], ['NOT_APPLIED', 'SECRET_MISSING', 'SECRET_UNREADABLE', 'SECRET_INVALID']);
  });

  it('applying or re-applying: a failed or refused apply', () => {
    alike(['applying', 'lost'], ['APPLY_FAILED', 'APPLY_REFUSED']);
  });
});
