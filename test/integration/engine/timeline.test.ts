/**
 * The status page's timeline, fed by the engine: a cache restarted without an ACL file puts one
 * loss and one heal per consumer in the provider's capped stream in the queue's Redis, in the
 * status's own words and with no secret; routine checks that pass add nothing; the stream stays
 * capped however much is written to it.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { TIMELINE_CAP } from '../../../src/queue/coordination/notes.js';
import type { ConsumerBrief } from '../../../src/queue/consumer-brief.js';
import type { TimelineEvent } from '../../../src/queue/timeline-event.js';
import { engineFixtures, readable } from './engine-fixture.js';

describe("a provider's timeline", () => {
  const fixture = engineFixtures();

  it("gets a loss and a heal per consumer when the cache restarts, in the status's words, and nothing for checks that pass", async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 12, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    const engine = await f.startHeld();
    const timeline = () => engine.coordination.notes.timeline('cache', Date.now() - 3_600_000);
    // first applies are not losses; some routine checks later, still nothing
    await new Promise((r) => setTimeout(r, 2500));
    expect(await timeline()).toEqual([]);

    await provider.restart();
    await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      30_000,
    );
    await f.until(
      'a heal per consumer in the timeline',
      async () => (await timeline()).filter((e) => e.kind === 'healed').length >= f.consumers.length,
      30_000,
    );
    const events = await timeline();
    for (const c of f.consumers) {
      const own = events.filter((e) => e.key === c.key);
      expect(
        own.map((e) => e.kind),
        c.key,
      ).toEqual(['lost', 'healed']);
      const [lost, healed] = own as [TimelineEvent, TimelineEvent];
      expect(healed.tookMs).toBeGreaterThan(0);
      expect(healed.at - healed.tookMs!).toBeLessThanOrEqual(lost.at);
      // the reason is the record's (what the status shows), not a fresh text; a heal of what the
      // record says was applied writes no record: its loss's reason is the chart's, as a record's would be
      const record = readable(await engine.store.get(c.key))!;
      const noted = record.history.find((h) => h.to === lost.state && h.at.getTime() === lost.at);
      if (noted) expect(noted.reason, c.key).toBe(lost.reason);
      else expect(healed.reason, c.key).toBe('applied again');
      // found missing, or first not reachable while it restarted
      expect(lost.reason).toMatch(/^(missing: the backend has no such ACL user|could not ask: )/);
    }
    const queue = new Redis(sharedBackend('redis').url);
    const raw = JSON.stringify(await queue.xrange(`${holdfastPrefix(f.config.queue.prefix)}:events:cache`, '-', '+'));
    queue.disconnect();
    expect(raw).toContain('healed'); // read what it holds, not nothing
    for (const secret of [
      ...f.consumers.map((c) => c.password),
      provider.admin.password,
      sharedBackend('redis').admin.password,
    ])
      expect(raw).not.toContain(secret);

    // routine checks that pass write nothing, to the stream neither
    const settledCount = (await timeline()).length;
    await new Promise((r) => setTimeout(r, 3000));
    expect((await timeline()).length).toBe(settledCount);
  }, 120_000);

  it(`stays capped at about ${TIMELINE_CAP} entries`, async () => {
    const redis = new Redis(sharedBackend('redis').url);
    const prefix = holdfastPrefix(`hfcap${randomBytes(3).toString('hex')}`);
    const coordination = createCoordination(redis, prefix, new NoteSeal(randomBytes(32)));
    const brief: ConsumerBrief = {
      rev: 1,
      state: 'lost',
      since: 0,
      login: 'x',
      brakeCount: 0,
      reason: 'missing',
      dueAt: null,
      lastCheck: null,
    };
    try {
      for (let round = 0; round < 5; round++) {
        const entries = Array.from(
          { length: 5000 },
          (_, i) =>
            [
              `capped/c${i}`,
              { ...brief, rev: round + 1 },
              [{ at: Date.now(), kind: 'lost', key: `capped/c${i}`, state: 'lost', reason: 'missing' }],
            ] as const,
        );
        await coordination.notes.noteBriefs(entries);
      }
      const length = await redis.xlen(`${prefix}:events:capped`);
      expect(length).toBeGreaterThanOrEqual(TIMELINE_CAP);
      expect(length).toBeLessThan(TIMELINE_CAP * 1.1);
      expect((await coordination.notes.timeline('capped', Date.now() - 3_600_000)).length).toBeLessThanOrEqual(
        TIMELINE_CAP,
      );
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  }, 60_000);
});
