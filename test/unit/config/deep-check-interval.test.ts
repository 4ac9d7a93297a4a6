import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { deepCheckIntervalMs } from '../../../src/config/deep-check-interval.js';
import { DEFAULT_TIMING } from '../../../src/config/timing.js';

const HOUR = 3_600_000;
const redis = (consumers: number | undefined, timing: Partial<typeof DEFAULT_TIMING> = {}) =>
  deepCheckIntervalMs({ timing: { ...DEFAULT_TIMING, ...timing }, costUs: redisAcl.deepCheckCostUs, consumers });

describe('the deep-check interval', () => {
  it('defaults to a budget of 1% of the backend, between verifyEvery and an hour', () => {
    expect(DEFAULT_TIMING.deepCheckBudget).toBe(0.01);
    expect(DEFAULT_TIMING.deepCheckEveryMs).toBe(HOUR);
    expect(redisAcl.deepCheckCostUs).toBe(1_000);
  });

  it("compares a small fleet's rules at every interval", () => {
    // 30 × 1 ms / 1% = 3 s: less than the 60 s interval, so every check is deep
    expect(redis(30)).toBe(60_000);
    expect(redis(1)).toBe(60_000);
    expect(redis(0)).toBe(60_000);
  });

  it("spreads a large fleet's deep checks as the budget allows, and keeps 100k at the hour", () => {
    expect(redis(1_000)).toBe(100_000); // 1,000 × 1 ms / 1%
    expect(redis(10_000)).toBe(1_000_000);
    expect(redis(100_000)).toBe(HOUR); // 10,000 s, clamped to deepCheckEvery
    expect(redis(1_000_000)).toBe(HOUR);
  });

  it('follows verifyEvery, the budget and deepCheckEvery', () => {
    // the integration test's figures: 30 consumers at verifyEvery 2s
    expect(redis(30, { verifyEveryMs: 2_000 })).toBe(3_000);
    expect(redis(30, { verifyEveryMs: 2_000, deepCheckBudget: 0.1 })).toBe(2_000);
    expect(redis(1_000, { deepCheckBudget: 0.05 })).toBe(60_000);
    expect(redis(10_000, { deepCheckEveryMs: 600_000 })).toBe(600_000);
  });

  it('is deepCheckEvery when the budget is 0, or the cost or the count is not known', () => {
    expect(redis(30, { deepCheckBudget: 0 })).toBe(HOUR);
    expect(redis(undefined)).toBe(HOUR);
    expect(deepCheckIntervalMs({ timing: DEFAULT_TIMING, costUs: undefined, consumers: 30 })).toBe(HOUR);
  });
});
