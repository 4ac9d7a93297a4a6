/**
 * The line of a probe connection's light checks (`src/adapters/redis-acl/probe-line.ts`): a few in flight while the
 * connection is unauthenticated; every one waiting let go at once when one authenticates; a wait past its deadline
 * starts nothing.
 */
import { describe, expect, it } from 'vitest';
import { ProbeLine } from '../../../src/adapters/redis-acl/probe-line.js';

/** Work that ends when told: what runs at once is counted. */
function works() {
  let running = 0;
  let most = 0;
  const ends: Array<() => void> = [];
  const work = () =>
    new Promise<void>((resolve) => {
      running += 1;
      most = Math.max(most, running);
      ends.push(() => {
        running -= 1;
        resolve();
      });
    });
  const settle = () => new Promise((r) => setImmediate(r));
  return { work, ends, settle, running: () => running, most: () => most };
}

const never = new AbortController().signal;
const aborted = () => new Error('waited past its deadline');

describe('the line of light checks on a probe connection', () => {
  it('keeps at most its bound in flight while the connection is unauthenticated', async () => {
    const line = new ProbeLine(3, () => false);
    const w = works();
    const all = Array.from({ length: 10 }, () => line.run(never, aborted, w.work));
    await w.settle();
    expect(w.running()).toBe(3);
    expect(line.queued).toBe(7);
    while (w.ends.length > 0) {
      w.ends.shift()!();
      await w.settle();
    }
    await Promise.all(all);
    expect(w.most()).toBe(3);
  });

  it('lets every waiting check go at once when one authenticated the connection', async () => {
    let authenticated = false;
    const line = new ProbeLine(3, () => authenticated);
    const w = works();
    const all = Array.from({ length: 10 }, () => line.run(never, aborted, w.work));
    await w.settle();
    expect(w.running()).toBe(3);
    authenticated = true; // the first of them succeeded
    w.ends.shift()!();
    await w.settle();
    expect(w.running()).toBe(9);
    expect(line.queued).toBe(0);
    w.ends.splice(0).forEach((end) => end());
    await Promise.all(all);
  });

  it('refuses a check whose deadline passes while it waits, and starts nothing for it', async () => {
    const line = new ProbeLine(1, () => false);
    const w = works();
    const first = line.run(never, aborted, w.work);
    const deadline = new AbortController();
    const waiting = line.run(deadline.signal, aborted, w.work);
    await w.settle();
    deadline.abort();
    await expect(waiting).rejects.toThrow('waited past its deadline');
    expect(line.queued).toBe(0);
    w.ends.shift()!();
    await first;
    expect(w.most()).toBe(1);
    expect(w.ends).toEqual([]);
  });
});
