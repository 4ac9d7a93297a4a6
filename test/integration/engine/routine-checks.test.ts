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

  it('touch no record from the first check after an apply either: a new provider settles without store work', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 20, timing: { verifyEvery: '2s', checkTimeout: '2s' } });
    const engine = await f.start();
    await f.until('every consumer held', () => f.allHeld());
    const storeBefore = { ...engine.store.counters };
    // from the queue's Redis only: each consumer's deep check at the revision its apply wrote
    const firstChecked = async () => {
      const { states } = await engine.coordination.notes.allStates();
      const memos = await engine.coordination.locks.checkMemos(Object.keys(states));
      return Object.entries(states).every(
        ([key, state]) => memos.get(key)?.rev === Number(state.split(' ')[1]) && memos.get(key)?.deepAt != null,
      );
    };
    await f.until('every consumer checked after its apply', firstChecked);
    const storeAfter = { ...engine.store.counters };
    expect(storeAfter.reads - storeBefore.reads).toBe(0);
    expect(storeAfter.writes - storeBefore.writes).toBe(0);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    for (const c of status.consumers) expect(c.lastCheck?.outcome).toBe('held');
    // applied together, first checked spread over an interval (half to one and a half of it after each apply), not all
    // one interval after
    const firstWaits = (await engine.store.list()).map((r) =>
      'timer' in r && r.timer && r.appliedAt ? r.timer.dueAt.getTime() - r.appliedAt.getTime() : NaN,
    );
    for (const ms of firstWaits) expect(ms).toBeGreaterThanOrEqual(900);
    for (const ms of firstWaits) expect(ms).toBeLessThan(3_000 + 1_000);
    expect(Math.max(...firstWaits) - Math.min(...firstWaits)).toBeGreaterThan(800);
  });
});
