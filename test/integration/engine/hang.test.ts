/** A backend that hangs (SIGSTOP): checks time out, nothing is re-created, the provider pauses. */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';
import { RecordingAdapter } from './test-adapters.js';

describe('a backend that hangs', () => {
  const fixture = engineFixtures();

  it('times checks out at checkTimeout, pauses the provider, re-creates nothing, and recovers without re-applies', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 12, timing: { verifyEvery: '1s', checkTimeout: '600ms' } });
    const adapter = new RecordingAdapter(
      redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)),
    );
    await f.startHeld(undefined, adapter);

    await provider.pause();
    const pausedAt = Date.now();
    await f.until('the provider paused', async () => (await f.status()).providers[0]?.paused !== null);
    await f.until(
      'every consumer could not ask',
      async () => (await f.status()).consumers.every((c) => c.state === 'couldNotAsk'),
      5000,
    );

    // the checks that reached the frozen server gave up at checkTimeout, not before, not much after
    const timedOut = adapter.calls.filter(
      (c) => c.method === 'holds' && c.start >= pausedAt && c.outcome?.includes('deadline'),
    );
    expect(timedOut.length).toBeGreaterThan(0);
    for (const c of timedOut) expect(c.end! - c.start).toBeGreaterThanOrEqual(590);
    for (const c of timedOut) expect(c.end! - c.start).toBeLessThan(600 + 1500);

    // while paused, the other checks are skipped: over 3 s (36 checks due) only probes reach the backend
    const windowStart = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    const asked = adapter.count('holds', windowStart);
    expect(asked).toBeLessThanOrEqual(3);
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(status.providers[0]?.paused?.reason).toMatch(/^the check of cache\/c\d{4} timed out after 600 ms$/);
    for (const c of status.consumers) expect(c.reason).toMatch(/^could not ask: /);

    await provider.resume();
    await f.until('every consumer held again', () => f.allHeld(), 6000);
    expect(adapter.count('create', pausedAt)).toBe(0);
    expect((await f.status()).providers[0]?.paused).toBeNull();
  });
});
