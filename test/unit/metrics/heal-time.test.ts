import { describe, expect, it } from 'vitest';
import { healTimeMs } from '../../../src/metrics/metrics.js';
import type { HistoryEntry } from '../../../src/store/consumer-record.js';

const at = (s: number) => new Date(1_000_000 + s * 1000);
const entry = (s: number, from: HistoryEntry['from'], to: HistoryEntry['to']): HistoryEntry => ({
  at: at(s),
  from,
  to,
  reason: null,
});

describe('heal time', () => {
  it('runs from leaving held to held again, through lost', () => {
    expect(healTimeMs(entry(12, 'lost', 'held'), [entry(0, 'applying', 'held'), entry(10, 'held', 'lost')])).toBe(2000);
    expect(
      healTimeMs(entry(70, 'checking', 'held'), [
        entry(0, 'applying', 'held'),
        entry(10, 'held', 'lost'),
        entry(11, 'lost', 'backoff'),
        entry(60, 'backoff', 'checking'),
      ]),
    ).toBe(60_000);
  });

  it('is not a heal when the consumer never was lost, or never held', () => {
    expect(healTimeMs(entry(5, 'applying', 'held'), [entry(0, 'held', 'applying')])).toBeUndefined(); // a spec change
    expect(healTimeMs(entry(5, 'applying', 'held'), [entry(0, 'pending', 'applying')])).toBeUndefined(); // the first apply
    expect(healTimeMs(entry(5, 'held', 'lost'), [])).toBeUndefined();
  });
});
