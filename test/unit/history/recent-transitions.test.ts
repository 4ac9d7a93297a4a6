/** A consumer's recent transitions on its page: its record's, and the quiet heals only the timeline holds. */
import { describe, expect, it } from 'vitest';
import { recentTransitions } from '../../../src/history/recent-transitions.js';
import { timelineEventsOf } from '../../../src/queue/timeline-event.js';
import type { HistoryEntry } from '../../../src/store/consumer-record.js';

const key = 'cache/app-a';
const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 9, 0, s));
const firstApply: HistoryEntry[] = [
  { at: at(0), from: 'pending', to: 'applying', reason: 'first apply' },
  { at: at(1), from: 'applying', to: 'checking', reason: null },
  { at: at(2), from: 'checking', to: 'held', reason: null },
];
const machine = { state: 'held' as const, context: {} as never };

describe('recent transitions', () => {
  it('lists a quiet heal (timeline only) above the record history, newest first', () => {
    const toLost: HistoryEntry = { at: at(10), from: 'held', to: 'lost', reason: 'missing' };
    const toHeld: HistoryEntry = { at: at(11), from: 'lost', to: 'held', reason: 'applied again' };
    const events = [...timelineEventsOf(key, toLost, []), ...timelineEventsOf(key, toHeld, [toLost])];
    const listed = recentTransitions({ history: firstApply, machine }, events).map((h) => `${h.from} → ${h.to}`);
    expect(listed).toEqual([
      'lost → held',
      'held → lost',
      'checking → held',
      'applying → checking',
      'pending → applying',
    ]);
  });

  it('lists a transition the record and the timeline both hold once', () => {
    const toLost: HistoryEntry = { at: at(10), from: 'held', to: 'lost', reason: 'missing' };
    const history = [...firstApply, toLost];
    const listed = recentTransitions(
      { history, machine: { ...machine, state: 'lost' } },
      timelineEventsOf(key, toLost, firstApply),
    );
    expect(listed.filter((h) => h.to === 'lost')).toHaveLength(1);
    expect(listed).toHaveLength(4);
  });

  it('lists the record alone when the timeline could not be read', () => {
    expect(recentTransitions({ history: firstApply, machine }, null)).toHaveLength(3);
  });
});
