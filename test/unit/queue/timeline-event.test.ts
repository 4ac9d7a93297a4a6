/**
 * Which transitions the timeline keeps: a loss from served, a heal after a loss (with how long), a brake; and the codec
 * that reads them back.
 */
import { describe, expect, it } from 'vitest';
import { decodeJson, timelineEventCodec } from '../../../src/queue/coordination/values.js';
import { timelineEventsOf } from '../../../src/queue/timeline-event.js';
import type { ConsumerStateName } from '../../../machines/consumer-machine.js';
import type { HistoryEntry } from '../../../src/store/consumer-record.js';

const t0 = Date.parse('2026-12-01T10:00:00Z');
const step = (
  s: number,
  from: ConsumerStateName,
  to: ConsumerStateName,
  reason: string | null = null,
): HistoryEntry => ({ at: new Date(t0 + s * 1000), from, to, reason });
const kinds = (transition: HistoryEntry, history: HistoryEntry[]) =>
  timelineEventsOf('cache/a', transition, history).map((e) => e.kind);

describe('timeline events', () => {
  const first = [step(0, 'pending', 'applying'), step(1, 'applying', 'held')];

  it('a loss from held, directly or through a check, is one loss', () => {
    expect(timelineEventsOf('cache/a', step(10, 'held', 'lost', 'missing'), first)).toEqual([
      { at: t0 + 10_000, kind: 'lost', key: 'cache/a', from: 'held', state: 'lost', reason: 'missing' },
    ]);
    const checking = [...first, step(10, 'held', 'checking')];
    expect(kinds(step(11, 'checking', 'lost'), checking)).toEqual(['lost']);
    expect(kinds(step(11, 'checking', 'couldNotAsk'), checking)).toEqual(['lost']);
    expect(kinds(step(10, 'held', 'checking'), first)).toEqual([]);
  });

  it('a check that finds it held, a first apply and moves between unserved states are nothing', () => {
    expect(kinds(step(11, 'checking', 'held'), [...first, step(10, 'held', 'checking')])).toEqual([]);
    expect(kinds(step(1, 'applying', 'held'), [step(0, 'pending', 'applying')])).toEqual([]);
    expect(kinds(step(12, 'lost', 'retrying'), [...first, step(10, 'held', 'lost')])).toEqual([]);
  });

  it('a heal after a loss says how long since it left held', () => {
    const lost = [...first, step(10, 'held', 'checking'), step(11, 'checking', 'lost')];
    expect(timelineEventsOf('cache/a', step(13, 'lost', 'held', 'applied again'), lost)).toEqual([
      {
        at: t0 + 13_000,
        kind: 'healed',
        key: 'cache/a',
        from: 'lost',
        state: 'held',
        reason: 'applied again',
        tookMs: 3000,
      },
    ]);
    const braked = [...lost, step(13, 'lost', 'backoff'), step(20, 'backoff', 'checking')];
    expect(timelineEventsOf('cache/a', step(21, 'checking', 'held'), braked)[0]).toMatchObject({
      kind: 'healed',
      tookMs: 11_000,
    });
  });

  it('a brake engagement is a brake', () => {
    expect(kinds(step(13, 'lost', 'backoff'), [...first, step(10, 'held', 'lost')])).toEqual(['brake']);
  });

  it('reads back only what holdfast wrote', () => {
    const [event] = timelineEventsOf('cache/a', step(10, 'held', 'lost', 'missing'), first);
    expect(decodeJson(timelineEventCodec, JSON.stringify(event))).toEqual(event);
    expect(decodeJson(timelineEventCodec, JSON.stringify({ ...event, kind: 'password' }))).toBeNull();
    expect(decodeJson(timelineEventCodec, JSON.stringify({ ...event, state: 'nowhere' }))).toBeNull();
    expect(decodeJson(timelineEventCodec, '{not json')).toBeNull();
  });

  it('carries who caused the transition and its node; one it does not know reads as none, the event kept', () => {
    const [event] = timelineEventsOf(
      'cache/a',
      { ...step(10, 'held', 'lost', 'missing'), by: 'check', node: '10.0.0.6:6379' },
      first,
    );
    expect(event).toMatchObject({ from: 'held', by: 'check', node: '10.0.0.6:6379' });
    expect(decodeJson(timelineEventCodec, JSON.stringify(event))).toEqual(event);
    const { by: _by, ...rest } = event!;
    expect(decodeJson(timelineEventCodec, JSON.stringify({ ...event, by: 'somebody-new' }))).toEqual(rest);
  });

  it("reads a heal the previous release drew from a state of a former name in this chart's words", () => {
    const lost = [...first, step(10, 'held', 'checking'), step(11, 'checking', 'lost')];
    const [healed] = timelineEventsOf('cache/a', step(12, 'checking', 'held'), lost);
    expect(healed).toMatchObject({ kind: 'healed', from: 'checking', state: 'held' });
    const former = JSON.stringify({ ...healed, from: 'verifying' }); // as the former release wrote it
    expect(decodeJson(timelineEventCodec, former)).toEqual(healed);
  });
});
