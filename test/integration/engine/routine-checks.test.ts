/**
 * What a routine check costs: no record read or written, one `AUTH` on the cache. What it
 * learned is still what the status shows.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

/** Calls per command the server has answered. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const stats = await redis.info('commandstats');
  return new Map([...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe('routine checks', () => {
  const fixture = engineFixtures();

  it('touch no record, cost the cache one AUTH each, and the status still shows them', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 20,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms', deepCheckBudget: 0 }, // deep checks only every deepCheckEvery: the default hour
    });
    const engine = await f.startHeld();
    // the first check at each revision of a record is deep; then they are light
    await f.until('every record settled', () => f.settled());

    const admin = new Redis(provider.url);
    try {
      const statusBefore = await f.status();
      const callsBefore = await commandCalls(admin);
      const storeBefore = { ...engine.store.counters };
      await new Promise((r) => setTimeout(r, 2000));
      const storeAfter = { ...engine.store.counters };
      const callsAfter = await commandCalls(admin);
      const statusAfter = await f.status();

      const delta = (name: string) => (callsAfter.get(name) ?? 0) - (callsBefore.get(name) ?? 0);
      // about six checks per consumer in 2 s: all light
      expect(delta('auth')).toBeGreaterThanOrEqual(f.consumers.length * 2);
      expect(delta('acl|getuser')).toBe(0);
      expect(delta('acl|setuser')).toBe(0);
      expect(storeAfter.reads - storeBefore.reads).toBe(0);
      expect(storeAfter.writes - storeBefore.writes).toBe(0);

      // what the checks learned reaches the status, from the queue's Redis
      for (const c of statusAfter.consumers) {
        const before = statusBefore.consumers.find((x) => x.consumer === c.consumer)!;
        expect(c.state).toBe('held');
        expect(c.lastCheck?.outcome).toBe('held');
        expect(Date.parse(c.lastCheck!.at)).toBeGreaterThan(Date.parse(before.lastCheck!.at));
      }
    } finally {
      admin.disconnect();
    }
  });
});
