/**
 * When a check is deep: after an apply, at the deep-check interval the provider's budget affords for its fleet, and
 * every check when that is every interval.
 */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { DEFAULT_TIMING } from '../../../src/config/timing.js';
import type { CheckMemo } from '../../../src/queue/coordination.js';
import { deepCheckDue, deepIntervalOf } from '../../../workers/effects.js';
import type { ProviderRuntime } from '../../../workers/provider-runtime.js';

const timing = { ...DEFAULT_TIMING, verifyEveryMs: 2_000 };
const runtime = (consumers: number | undefined): ProviderRuntime =>
  ({
    config: { name: 'cache', adapter: redisAcl, timing } as unknown as ProviderConfig,
    fleet: { consumers },
  }) as unknown as ProviderRuntime;
const memo = (deepAt: number): CheckMemo => ({ at: deepAt, outcome: 'held', detail: null, rev: 1, deepAt });

describe('deepCheckDue', () => {
  const appliedAt = 0;
  const deepAt = 10_000;

  it('is due at every check when the budget affords the verify interval (10 consumers: 1 s, so 2 s)', () => {
    const p = runtime(10);
    expect(deepIntervalOf(p)).toBe(2_000);
    // a check that comes early by its jitter is deep too
    for (let i = 0; i < 50; i++)
      expect(deepCheckDue(`cache/c${i}`, appliedAt, memo(deepAt), p, deepAt + 1_900)).toBe(true);
  });

  it('comes at the interval the fleet affords (30 consumers: 3 s ± 5%), and every hour while the count is unknown', () => {
    const p = runtime(30);
    expect(deepIntervalOf(p)).toBe(3_000);
    expect(deepCheckDue('cache/c1', appliedAt, memo(deepAt), p, deepAt + 2_000)).toBe(false);
    expect(deepCheckDue('cache/c1', appliedAt, memo(deepAt), p, deepAt + 3_200)).toBe(true);
    const unknown = runtime(undefined);
    expect(deepIntervalOf(unknown)).toBe(3_600_000);
    expect(deepCheckDue('cache/c1', appliedAt, memo(deepAt), unknown, deepAt + 60_000)).toBe(false);
  });

  it('is due after an apply, whatever the interval', () => {
    expect(deepCheckDue('cache/c1', 20_000, memo(deepAt), runtime(undefined), 21_000)).toBe(true);
    expect(deepCheckDue('cache/c1', null, null, runtime(100_000), 21_000)).toBe(true);
  });
});
