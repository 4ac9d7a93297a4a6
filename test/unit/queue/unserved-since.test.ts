/** Since when a consumer has not been served, as its brief says (the "not served" alert reads it). */
import { describe, expect, it } from 'vitest';
import { unservedSince } from '../../../src/queue/brief-of.js';
import type { HistoryEntry } from '../../../src/store/consumer-record.js';

const at = (s: number) => new Date(1_000_000 + s * 1000);
const entry = (s: number, from: HistoryEntry['from'], to: HistoryEntry['to']): HistoryEntry => ({
  at: at(s),
  from,
  to,
  reason: null,
});

describe('unserved since', () => {
  it('runs from leaving a served state, through every unserved state since', () => {
    const history = [
      entry(0, 'applying', 'held'),
      entry(10, 'held', 'lost'),
      entry(11, 'lost', 'applying'),
      entry(12, 'applying', 'retrying'),
      entry(14, 'retrying', 'applying'),
      entry(15, 'applying', 'retrying'),
    ];
    expect(unservedSince('retrying', history, at(15))).toBe(at(10).getTime());
  });

  it('is absent while the consumer is served', () => {
    expect(unservedSince('held', [entry(0, 'applying', 'held')], at(0))).toBeUndefined();
    expect(unservedSince('removing', [entry(0, 'held', 'removing')], at(0))).toBeUndefined();
  });

  it('for a consumer never served, or whose loss is older than its history, is its oldest transition', () => {
    expect(unservedSince('retrying', [entry(3, 'pending', 'applying'), entry(4, 'applying', 'retrying')], at(4))).toBe(
      at(3).getTime(),
    );
    expect(unservedSince('pending', [], at(7))).toBe(at(7).getTime());
    expect(unservedSince('unreadable', [entry(3, 'held', 'lost')], at(5))).toBe(at(3).getTime());
  });
});
