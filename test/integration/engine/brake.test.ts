/** An adapter whose create and holds disagree: the brake. */
import { describe, expect, it } from 'vitest';
import { engineFixtures } from './engine-fixture.js';
import { DisagreeingAdapter, RecordingAdapter } from './test-adapters.js';

const V = 300;
const MAX = 2400;
/** Room for a loaded machine: a gap may come late by this much, never early. */
const LATE = 1000;

describe('create and holds that disagree', () => {
  const fixture = engineFixtures();

  it('re-applies at doubling intervals up to brakeMax, loudly; a failed re-apply leaves the count unchanged', async () => {
    const inner = new DisagreeingAdapter();
    const adapter = new RecordingAdapter(inner);
    const f = await fixture({
      consumers: 1,
      timing: { verifyEvery: `${V}ms`, checkTimeout: '100ms', brakeMax: `${MAX}ms`, jitter: 0, retryBase: '50ms' },
      adapter,
    });
    await f.start();
    const creates = () => adapter.calls.filter((c) => c.method === 'create');
    await f.until('seven applies', () => creates().length >= 7, 30_000);

    // apply, re-apply (held again, checked after v), then the brake: 2v, 4v, 8v = brakeMax, brakeMax
    const starts = creates().map((c) => c.start);
    const gaps = starts.slice(1, 7).map((t, i) => t - starts[i]!);
    // the first check after a consumer's first apply comes anywhere in [v/2, 3v/2) (`firstCheckDelay`): a burst of new
    // consumers is first checked spread
    const [first, ...rest] = gaps;
    expect(first).toBeGreaterThanOrEqual(V / 2 - 5);
    expect(first).toBeLessThan((3 * V) / 2 + LATE);
    const expected = [V, 2 * V, 4 * V, MAX, MAX];
    rest.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i]! - 5);
      expect(gap).toBeLessThan(expected[i]! + LATE);
    });
    const loud = f.logs.filter((l) => l.level >= 50 && l.msg.startsWith('still not held after'));
    expect(loud.length).toBeGreaterThanOrEqual(5);
    expect(loud[0]!.msg).toContain('(rules-differ: commands: backend has "-@all", expected "+@read")');
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(['backoff', 'lost', 'checking']).toContain(status.consumers[0]!.state);

    // three failing re-applies: retried on their own backoff, the count does not move
    const countBefore = await f
      .until('in backoff', async () => (await f.status()).consumers[0]!.state === 'backoff')
      .then(async () => (await f.status()).consumers[0]!.brakeCount);
    inner.failNextCreates = 3;
    const failedFrom = Date.now();
    await f.until(
      'three failures and a success',
      () => {
        const after = creates().filter((c) => c.start >= failedFrom);
        return after.length >= 4 && after[3]!.outcome === 'ok';
      },
      30_000,
    );
    const after = creates().filter((c) => c.start >= failedFrom);
    expect(after.slice(0, 3).map((c) => c.outcome)).toEqual(Array(3).fill('threw: ERR injected create failure'));
    // retry gaps: 50, 100, 200 ms (its own backoff), not the brake (2.4 s)
    const retryGaps = after.slice(1, 4).map((c, i) => c.start - after[i]!.start);
    for (const gap of retryGaps) expect(gap).toBeLessThan(MAX);
    expect(retryGaps[0]).toBeGreaterThanOrEqual(50 - 5);
    expect(retryGaps[2]).toBeGreaterThanOrEqual(200 - 5);
    await f.until('back in backoff', async () => (await f.status()).consumers[0]!.state === 'backoff');
    expect((await f.status()).consumers[0]!.brakeCount).toBe(countBefore + 1);
    expect(
      f.logs.filter((l) => l.msg.startsWith('re-apply failed (ERR injected create failure); retrying in')),
    ).toHaveLength(3);
  });
});
