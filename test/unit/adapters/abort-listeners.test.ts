/**
 * Listeners of a shared signal (`src/adapters/abort-listeners.ts`): each callback called once when the signal aborts,
 * none after it was stopped, at once on a signal already aborted, and one listener on the signal for them all.
 */
import { describe, expect, it } from 'vitest';
import { onAbort } from '../../../src/adapters/abort-listeners.js';

/** A signal that counts the listeners added to it. */
function counted(): { controller: AbortController; added: () => number } {
  const controller = new AbortController();
  let added = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
    added += 1;
    add(...args);
  };
  return { controller, added: () => added };
}

describe('listeners of a shared signal', () => {
  it('calls every callback once when the signal aborts, and none that was stopped', () => {
    const { controller } = counted();
    const called: number[] = [];
    const stops = Array.from({ length: 5 }, (_, i) => onAbort(controller.signal, () => called.push(i)));
    stops[1]!();
    stops[3]!();
    controller.abort();
    controller.abort();
    expect(called).toEqual([0, 2, 4]);
  });

  it('hangs one listener on the signal for thousands of callbacks', () => {
    const { controller, added } = counted();
    let called = 0;
    const stops = Array.from({ length: 5_000 }, () => onAbort(controller.signal, () => (called += 1)));
    stops.slice(0, 2_500).forEach((stop) => stop());
    controller.abort();
    expect(added()).toBe(1);
    expect(called).toBe(2_500);
  });

  it('calls a callback at once on a signal that already aborted', () => {
    let called = 0;
    const stop = onAbort(AbortSignal.abort(), () => (called += 1));
    expect(called).toBe(1);
    stop();
    expect(called).toBe(1);
  });

  it('keeps each signal apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const called: string[] = [];
    onAbort(a.signal, () => called.push('a'));
    onAbort(b.signal, () => called.push('b'));
    b.abort();
    expect(called).toEqual(['b']);
    a.abort();
    expect(called).toEqual(['b', 'a']);
  });
});
