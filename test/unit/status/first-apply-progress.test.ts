import { describe, expect, it } from 'vitest';
import {
  FirstApplyPace,
  PACE_WINDOW_MS,
  firstApplyCount,
  outstanding,
  progressWords,
} from '../../../src/status/first-apply-progress.js';

describe('first applies: their progress and pace', () => {
  it('counts no more applied than declared, and is outstanding only while fewer are', () => {
    expect(firstApplyCount(310, 300)).toEqual({ applied: 300, declared: 300 });
    expect(outstanding(firstApplyCount(310, 300))).toBe(false);
    expect(outstanding(firstApplyCount(299, 300))).toBe(true);
  });

  it('gives a rate and the time left from the samples of the last window', () => {
    const pace = new FirstApplyPace();
    expect(pace.observe('cache', { applied: 0, declared: 4000 }, 0)).toEqual({
      applied: 0,
      declared: 4000,
      perSecond: null,
      leftS: null,
    });
    expect(pace.observe('cache', { applied: 1000, declared: 4000 }, 10_000)).toMatchObject({
      perSecond: 100,
      leftS: 30,
    });
    // the first sample leaves the window: the rate is the recent one
    const later = pace.observe('cache', { applied: 1500, declared: 4000 }, 10_000 + PACE_WINDOW_MS);
    expect(later.perSecond).toBeCloseTo(500 / 30, 5);
    expect(later.leftS).toBe(150);
  });

  it('starts again when the count falls, and says nothing of a rate of none', () => {
    const pace = new FirstApplyPace();
    pace.observe('cache', { applied: 500, declared: 1000 }, 0);
    expect(pace.observe('cache', { applied: 100, declared: 1000 }, 5_000).perSecond).toBeNull();
    const still = pace.observe('cache', { applied: 100, declared: 1000 }, 10_000);
    expect(still).toMatchObject({ perSecond: 0, leftS: null });
    expect(progressWords(still)).toBe('100 of 1,000 declared consumers applied (10.0 %), 0/s, none applied lately');
  });

  it('says it in words a person reads', () => {
    expect(progressWords({ applied: 5120, declared: 20_000, perSecond: 410.4, leftS: 37 })).toBe(
      '5,120 of 20,000 declared consumers applied (25.6 %), 410/s, about 37 s left',
    );
    expect(progressWords({ applied: 1000, declared: 100_000, perSecond: 400, leftS: 248 })).toBe(
      '1,000 of 100,000 declared consumers applied (1.0 %), 400/s, about 4 min 8 s left',
    );
    expect(progressWords({ applied: 0, declared: 300, perSecond: null, leftS: null })).toBe(
      '0 of 300 declared consumers applied (0.0 %)',
    );
  });
});
