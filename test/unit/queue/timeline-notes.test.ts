/**
 * The timeline's events go with the brief they come from: both commands are sent before either
 * reply (one round trip, pipelined on the connection), under the key table's name, capped; what
 * is read back is decoded, and what holdfast did not write is left out.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { coordinationKeys, holdfastPrefix } from '../../../src/queue/coordination/keys.js';
import { Notes, TIMELINE_CAP } from '../../../src/queue/coordination/notes.js';
import { ScriptRunner } from '../../../src/queue/coordination/scripts.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import type { ConsumerBrief } from '../../../src/queue/consumer-brief.js';
import type { TimelineEvent } from '../../../src/queue/timeline-event.js';

/** A connection that records each command as it is sent, and answers only when told. */
function recording() {
  const sent: Array<[string, ...unknown[]]> = [];
  const replies: Array<() => void> = [];
  const answer =
    (name: string) =>
    (...args: unknown[]) => {
      sent.push([name, ...args]);
      return new Promise((resolve) => replies.push(() => resolve(name === 'xrevrange' ? stream : 1)));
    };
  let stream: unknown[] = [];
  const redis = {
    defineCommand(name: string) {
      (redis as Record<string, unknown>)[name] = answer(name);
    },
    xadd: answer('xadd'),
    xrevrange: answer('xrevrange'),
  };
  return {
    redis: redis as unknown as Redis,
    sent,
    answerAll: () => replies.splice(0).forEach((r) => r()),
    holding: (entries: unknown[]) => (stream = entries),
  };
}

const keys = coordinationKeys(holdfastPrefix('{hf}'));
const brief: ConsumerBrief = {
  rev: 3,
  state: 'lost',
  since: 1,
  login: 'app',
  brakeCount: 0,
  reason: 'missing',
  dueAt: null,
  lastCheck: null,
};
const lost: TimelineEvent = { at: 1000, kind: 'lost', key: 'cache/c1', state: 'lost', reason: 'missing' };

describe("the timeline's notes", () => {
  it("sends the event right behind the brief, before any reply, capped, under the key table's name", async () => {
    const { redis, sent, answerAll } = recording();
    const notes = new Notes({ redis, keys, scripts: new ScriptRunner(redis, keys) }, new NoteSeal(Buffer.alloc(32)));
    const noting = notes.noteBriefs([['cache/c1', brief, [lost]]]);
    expect(sent.map(([name]) => name)).toEqual(['hfNoteBriefs', 'xadd']);
    expect(sent[1]).toEqual([
      'xadd',
      '{hf}:holdfast:events:cache',
      'MAXLEN',
      '~',
      TIMELINE_CAP,
      '*',
      'e',
      JSON.stringify(lost),
    ]);
    answerAll();
    await noting;
  });

  it("notes a turn's quiet heals in one call per provider: their events added and their findings counted", async () => {
    const { redis, sent, answerAll } = recording();
    const notes = new Notes({ redis, keys, scripts: new ScriptRunner(redis, keys) }, new NoteSeal(Buffer.alloc(32)));
    const healed: TimelineEvent = {
      at: 1200,
      kind: 'healed',
      key: 'cache/c1',
      state: 'held',
      reason: 'applied again',
      tookMs: 200,
    };
    const finding = {
      key: 'cache/c1',
      reason: 'missing',
      words: 'missing (no such ACL user)',
      at: 1000,
      windowMs: 3_600_000,
      waveMs: 120_000,
    } as const;
    const other: TimelineEvent = { ...lost, key: 'cache/c2' };
    const noting = [
      notes.noteTimeline([lost, healed], finding),
      notes.noteTimeline([other]),
      notes.noteTimeline([{ ...lost, key: 'db/d1' }]),
    ];
    expect(sent).toEqual([]); // sent as the turn ends, together
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map(([name]) => name)).toEqual(['hfNoteHeals', 'hfNoteHeals']);
    expect(sent[0]).toEqual([
      'hfNoteHeals',
      '{hf}:holdfast:events:cache',
      '{hf}:holdfast:findings:cache',
      '{hf}:holdfast:findings-at:cache',
      '{hf}:holdfast:contested:cache',
      '{hf}:holdfast:contested-why:cache',
      '{hf}:holdfast:loss-wave:cache',
      TIMELINE_CAP,
      ...['cache/c1', 1000, 3_600_000, 3, '1', 'missing (no such ACL user)', 120_000, 10_000, 2],
      JSON.stringify(lost),
      JSON.stringify(healed),
      ...['', '', '', '', '', '', '', '', 1],
      JSON.stringify(other),
    ]);
    expect(sent[1]!.slice(0, 2)).toEqual(['hfNoteHeals', '{hf}:holdfast:events:db']);
    answerAll();
    await Promise.all(noting);
    // nothing to note: nothing sent
    expect(await notes.noteTimeline([])).toBeUndefined();
    expect(sent).toHaveLength(2);
  });

  it('sends nothing more for a brief without events', async () => {
    const { redis, sent, answerAll } = recording();
    const noting = new Notes(
      { redis, keys, scripts: new ScriptRunner(redis, keys) },
      new NoteSeal(Buffer.alloc(32)),
    ).noteBriefs([['cache/c1', brief]]);
    expect(sent.map(([name]) => name)).toEqual(['hfNoteBriefs']);
    answerAll();
    await noting;
  });

  it('reads back the last 24 h oldest first, leaving out what holdfast did not write', async () => {
    const { redis, sent, answerAll, holding } = recording();
    holding([
      ['3-0', ['e', JSON.stringify({ ...lost, at: 3000 })]],
      ['2-0', ['e', '{"kind":"password","secret":"x"}']],
      ['1-5', ['x', 'e']],
      ['1-0', ['e', JSON.stringify(lost)]],
    ]);
    const reading = new Notes(
      { redis, keys, scripts: new ScriptRunner(redis, keys) },
      new NoteSeal(Buffer.alloc(32)),
    ).timeline('cache', 500);
    answerAll();
    expect(await reading).toEqual([lost, { ...lost, at: 3000 }]);
    expect(sent[0]).toEqual(['xrevrange', '{hf}:holdfast:events:cache', '+', '500', 'COUNT', TIMELINE_CAP]);
  });
});
