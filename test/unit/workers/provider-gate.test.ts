/**
 * The provider gate (`workers/provider-gate.ts`): a burst of checks that find the pause they keep stale (a heal's
 * hundreds in one turn) read the provider's pause from the queue's Redis once, and each is told what it says.
 */
import { describe, expect, it } from 'vitest';
import type { Pause, PauseSignals } from '../../../src/queue/coordination.js';

import { ProviderGate } from '../../../workers/provider-gate.js';

/** Pause signals held in memory, counting the reads of each provider's pause. */
function signals(paused: Record<string, Pause>): PauseSignals & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    pauseOf: (provider) => {
      reads.push(provider);
      return Promise.resolve(paused[provider] ?? null);
    },
    pauseProvider: () => Promise.resolve(true),
    unpauseProvider: () => Promise.resolve(true),
    takeProbe: () => Promise.resolve(false),
  };
}

describe('the provider gate', () => {
  it("reads a provider's pause once for a burst of checks, and tells each what it says", async () => {
    const pause: Pause = { since: '2026-12-07T06:05:10.000Z', reason: 'the check of x timed out' };
    const shared = signals({ slow: pause });
    const gate = new ProviderGate(shared);
    const burst = await Promise.all([
      ...Array.from({ length: 50 }, () => gate.admit('cache', 6_000)),
      ...Array.from({ length: 50 }, () => gate.admit('slow', 6_000)),
    ]);
    expect(shared.reads.sort()).toEqual(['cache', 'slow']);
    expect(burst.slice(0, 50).every((a) => a.admitted)).toBe(true);
    expect(burst.slice(50).every((a) => !a.admitted && a.pause.reason === pause.reason)).toBe(true);
  });

  it('reads the pause again once the read failed', async () => {
    const shared = signals({});
    let fail = true;
    const gate = new ProviderGate({
      ...shared,
      pauseOf: (provider) => (fail ? Promise.reject(new Error('queue Redis down')) : shared.pauseOf(provider)),
    });
    await expect(gate.admit('cache', 6_000)).rejects.toThrow('queue Redis down');
    fail = false;
    expect(await gate.admit('cache', 6_000)).toEqual({ admitted: true, probe: false });
    expect(shared.reads).toEqual(['cache']);
  });
});
