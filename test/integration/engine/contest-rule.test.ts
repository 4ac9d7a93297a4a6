/**
 * The counting rule of contested logins (`src/queue/contest.ts`), run by its script in a real
 * Redis with the times given: three findings within the window make a consumer contested (said
 * once: only the third says it became so), a window without one ends it, a login found missing
 * while another of its provider's was too (a loss wave: a restart) counts for neither, and what
 * is kept stays bounded and expires.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import type { Finding } from '../../../src/queue/contest.js';
import type { TimelineEvent } from '../../../src/queue/timeline-event.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

describe('the contested-login count, in a real Redis', () => {
  const redis = new Redis(sharedBackend('redis').url);
  afterAll(() => redis.disconnect());
  const fresh = () => {
    const prefix = holdfastPrefix(`{contest-${randomBytes(4).toString('hex')}}`);
    return {
      coordination: createCoordination(redis, prefix, new NoteSeal(randomBytes(32))),
      keys: coordinationKeys(prefix),
    };
  };
  const finding = (
    key: string,
    at: number,
    reason = 'rules-differ',
    words = `${reason} (commands: the backend also has +@all)`,
  ): Finding => ({
    key,
    reason,
    words,
    at,
    windowMs: HOUR,
    waveMs: 2 * MINUTE,
  });
  const t0 = Date.now();

  it('makes a consumer contested at its third finding within the window, says so once, and ends it a window after the last', async () => {
    const { coordination } = fresh();
    const note = (at: number, reason?: string) =>
      coordination.notes.noteTimeline([], finding('cache/photos', at, reason));
    expect(await note(t0)).toEqual({ counted: true, findings: 1, contested: false, became: false });
    expect(await note(t0 + 10 * MINUTE, 'password-differs')).toEqual({
      counted: true,
      findings: 2,
      contested: false,
      became: false,
    });
    expect(await coordination.contests.contested(['cache'], t0 + 10 * MINUTE, 10)).toEqual(
      new Map([['cache', { count: 0, listed: [] }]]),
    );
    expect(await note(t0 + 20 * MINUTE)).toEqual({ counted: true, findings: 3, contested: true, became: true });
    // each further finding keeps it contested without becoming so again (not said again)
    expect(await note(t0 + 30 * MINUTE)).toEqual({ counted: true, findings: 4, contested: true, became: false });
    const contest = {
      key: 'cache/photos',
      findings: 4,
      since: t0 + 20 * MINUTE,
      until: t0 + 30 * MINUTE + HOUR,
      last: 'rules-differ (commands: the backend also has +@all)',
      windowMs: HOUR,
    };
    expect(await coordination.contests.contested(['cache'], t0 + 31 * MINUTE, 10)).toEqual(
      new Map([['cache', { count: 1, listed: [contest] }]]),
    );
    expect(await coordination.contests.contestOf('cache/photos', t0 + 31 * MINUTE)).toEqual(contest);
    // a window passes without a finding: no longer contested (what the gauge reads drops)
    expect(await coordination.contests.contestOf('cache/photos', t0 + 30 * MINUTE + HOUR)).toBeNull();
    expect((await coordination.contests.contested(['cache'], t0 + 30 * MINUTE + HOUR, 10)).get('cache')!.count).toBe(0);
    // and it takes three findings within a window again to be contested again
    expect(await note(t0 + 31 * MINUTE + HOUR)).toEqual({
      counted: true,
      findings: 1,
      contested: false,
      became: false,
    });
  });

  it('does not count findings further apart than the window', async () => {
    const { coordination } = fresh();
    const note = (at: number) => coordination.notes.noteTimeline([], finding('cache/mail', at));
    for (let i = 0; i < 6; i++) expect(await note(t0 + i * 31 * MINUTE)).toMatchObject({ contested: false });
    expect(await note(t0 + 6 * 31 * MINUTE)).toMatchObject({ findings: 2 });
  });

  it('does not count a login found missing in a loss wave: a cache restarted three times marks no consumer contested', async () => {
    const { coordination } = fresh();
    const consumers = ['cache/a', 'cache/b', 'cache/c', 'cache/d'];
    for (const restart of [0, 20, 40]) {
      // after each restart every login is found missing, spread over one verify interval (1 min)
      const outcomes = [];
      for (const [i, key] of consumers.entries())
        outcomes.push(
          await coordination.notes.noteTimeline(
            [],
            finding(key, t0 + restart * MINUTE + i * 15_000, 'missing', 'missing (the backend has no such ACL user)'),
          ),
        );
      // the first one found is counted until the second shows the wave (said once: its consumers become suspect):
      // then taken back; the later restarts' findings are that wave going on (it is kept its span in real time, and
      // these findings' times are made up)
      const began = restart === 0 ? { waveBegan: true, waveSince: t0 } : {};
      expect(outcomes.slice(1)).toEqual([{ counted: false, ...began }, { counted: false }, { counted: false }]);
    }
    expect((await coordination.contests.contested(['cache'], t0 + 41 * MINUTE, 10)).get('cache')!.count).toBe(0);
    // the first of each wave had its finding taken back: a real change later is its first
    expect(await coordination.notes.noteTimeline([], finding('cache/a', t0 + 50 * MINUTE))).toMatchObject({
      findings: 1,
    });
  });

  it('counts a login dropped by hand while the provider keeps its other logins', async () => {
    const { coordination } = fresh();
    const outcomes = [];
    for (const minutes of [0, 10, 20])
      outcomes.push(
        await coordination.notes.noteTimeline(
          [],
          finding('cache/photos', t0 + minutes * MINUTE, 'missing', 'missing (the backend has no such ACL user)'),
        ),
      );
    expect(outcomes.map((o) => o?.counted && o.became)).toEqual([false, false, true]);
  });

  it("takes back a contest that a wave's first finding made", async () => {
    const { coordination } = fresh();
    await coordination.notes.noteTimeline([], finding('cache/a', t0));
    await coordination.notes.noteTimeline([], finding('cache/a', t0 + 10 * MINUTE));
    // the cache restarts: cache/a is found missing first (its third finding), then cache/b
    expect(await coordination.notes.noteTimeline([], finding('cache/a', t0 + 20 * MINUTE, 'missing'))).toMatchObject({
      became: true,
    });
    expect(await coordination.notes.noteTimeline([], finding('cache/b', t0 + 20 * MINUTE + 5000, 'missing'))).toEqual({
      counted: false,
      waveBegan: true,
      waveSince: t0 + 20 * MINUTE,
    });
    expect(await coordination.contests.contestOf('cache/a', t0 + 21 * MINUTE)).toBeNull();
  });

  it("forgets a removed consumer's findings and contest with its other entries", async () => {
    const { coordination, keys } = fresh();
    for (const minutes of [0, 1, 2])
      await coordination.notes.noteTimeline([], finding('cache/photos', t0 + minutes * MINUTE));
    expect(await coordination.contests.contestOf('cache/photos', t0 + 3 * MINUTE)).not.toBeNull();
    await coordination.locks.forgetConsumer('cache/photos', 'cache');
    expect(await coordination.contests.contestOf('cache/photos', t0 + 3 * MINUTE)).toBeNull();
    expect(await redis.hget(keys.findings('cache'), 'cache/photos')).toBeNull();
  });

  it('keeps per consumer its last three findings only, and lets every key expire', async () => {
    const { coordination, keys } = fresh();
    for (let i = 0; i < 10; i++)
      await coordination.notes.noteTimeline([], finding('cache/photos', Date.now() - 10 * MINUTE + i * 1000));
    expect((await redis.hget(keys.findings('cache'), 'cache/photos'))!.split(' ')).toHaveLength(3);
    for (const key of [
      keys.findings('cache'),
      keys.findingsAt('cache'),
      keys.contested('cache'),
      keys.contestedWhy('cache'),
    ]) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(2 * HOUR);
    }
  });

  it("counts the heals of one turn (one call) as it counts them one by one, and adds each heal's events to the timeline", async () => {
    // the same findings, a real change counted three times and a loss wave, one call each and all in one turn
    const findings = [
      finding('cache/photos', t0),
      finding('cache/photos', t0 + MINUTE),
      finding('cache/photos', t0 + 2 * MINUTE),
      ...['cache/a', 'cache/b', 'cache/c'].map((key, i) => finding(key, t0 + 3 * MINUTE + i * 1000, 'missing')),
      finding('cache/photos', t0 + 4 * MINUTE),
    ];
    const one = fresh();
    const oneByOne = [];
    for (const f of findings) oneByOne.push(await one.coordination.notes.noteTimeline([], f));
    const turn = fresh();
    const events = findings.map((f): TimelineEvent => ({
      at: f.at,
      kind: 'lost',
      key: f.key,
      state: 'lost',
      reason: f.reason,
    }));
    const together = await Promise.all(findings.map((f, i) => turn.coordination.notes.noteTimeline([events[i]!], f)));
    expect(together).toEqual(oneByOne);
    expect(together.map((o) => o?.counted && o.became)).toEqual([false, false, true, false, false, false, false]);
    expect(await turn.coordination.notes.timeline('cache', t0)).toEqual(events);
    for (const at of [t0 + 5 * MINUTE, t0 + 2 * HOUR])
      expect(await turn.coordination.contests.contested(['cache'], at, 10)).toEqual(
        await one.coordination.contests.contested(['cache'], at, 10),
      );
  });

  it('forgets findings older than the window as new ones come', async () => {
    const { coordination, keys } = fresh();
    for (let i = 0; i < 50; i++) await coordination.notes.noteTimeline([], finding(`cache/c${i}`, t0 + i));
    expect(await redis.hlen(keys.findings('cache'))).toBe(50);
    await coordination.notes.noteTimeline([], finding('cache/late', t0 + HOUR + 100));
    expect(await redis.hlen(keys.findings('cache'))).toBe(1);
    expect(await redis.zcard(keys.findingsAt('cache'))).toBe(1);
  });
});
