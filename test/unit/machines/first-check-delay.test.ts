/** A new provider's consumers, applied in one burst, are first checked spread over a whole interval. */
import { describe, expect, it } from 'vitest';
import { firstCheckDelay } from '../../../machines/delays.js';

describe('the first check after a first apply', () => {
  it('comes between half an interval and one and a half after it, spread evenly over the consumers', () => {
    const v = 60_000;
    const delays = Array.from({ length: 10_000 }, (_, i) =>
      firstCheckDelay(`cache/c${String(i).padStart(6, '0')}`, { verifyEveryMs: v }),
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(v / 2);
    expect(Math.max(...delays)).toBeLessThan(1.5 * v);
    // each tenth of the interval gets about a tenth of the consumers (none more than 15%)
    const tenths = Array.from(
      { length: 10 },
      (_, d) => delays.filter((ms) => Math.floor((ms - v / 2) / (v / 10)) === d).length,
    );
    for (const count of tenths) expect(count).toBeGreaterThan(500);
    for (const count of tenths) expect(count).toBeLessThan(1500);
    // the same consumer always gets the same delay
    expect(firstCheckDelay('cache/c000042', { verifyEveryMs: v })).toBe(delays[42]);
  });
});
