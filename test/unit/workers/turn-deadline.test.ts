/**
 * The effects' deadlines (`workers/turn-deadline.ts`): the calls one turn begins with one timeout share one signal,
 * which aborts at the first's deadline (none is given more than its timeout); a later turn gets its own; the timer is
 * let go once the turn ended and every call that shared it is done. The clock is vitest's: nothing here waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TurnDeadlines } from '../../../workers/turn-deadline.js';

describe("the effects' deadlines", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.clearAllTimers();
    vi.useRealTimers();
  });

  it('gives the calls of one turn one signal, aborted at their timeout, and the next turn another', async () => {
    const deadlines = new TurnDeadlines();
    const begun = Date.now();
    const turn = [deadlines.take(5_000), deadlines.take(5_000), deadlines.take(5_000)];
    const other = deadlines.take(30_000);
    expect(new Set(turn.map((d) => d.signal)).size).toBe(1);
    expect(other.signal).not.toBe(turn[0]!.signal);
    expect(turn.every((d) => d.deadline === begun + 5_000)).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    const next = deadlines.take(5_000);
    expect(next.signal).not.toBe(turn[0]!.signal);
    await vi.advanceTimersByTimeAsync(4_998);
    expect(turn[0]!.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(turn[0]!.signal.aborted).toBe(true);
    expect(next.signal.aborted).toBe(false);
    expect(other.signal.aborted).toBe(false);
  });

  it('lets the timer go once the turn ended and every call that shared it is done', async () => {
    const deadlines = new TurnDeadlines();
    const calls = [deadlines.take(5_000), deadlines.take(5_000)];
    calls[0]!.done();
    calls[0]!.done(); // done twice counts once
    await vi.advanceTimersByTimeAsync(1);
    expect(vi.getTimerCount()).toBe(1);
    calls[1]!.done();
    expect(vi.getTimerCount()).toBe(0);
    const late = deadlines.take(5_000);
    late.done();
    // its turn is not over (another call may still share it): its timer kept, beside the turn's end
    expect(vi.getTimerCount()).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
