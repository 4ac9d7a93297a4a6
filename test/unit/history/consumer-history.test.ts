/**
 * A consumer's history as data: the record's transitions and the heals only the timeline holds, oldest first, with
 * causes, nodes and how far back it goes.
 */
import { describe, expect, it } from 'vitest';
import { consumerHistory } from '../../../src/history/consumer-history.js';
import { formatHistory } from '../../../src/history/format-history.js';
import { historyAnswer } from '../../../src/http/history-route.js';
import { timelineEventsOf, type TimelineEvent } from '../../../src/queue/timeline-event.js';
import { HISTORY_LENGTH, type ConsumerRecord, type HistoryEntry } from '../../../src/store/consumer-record.js';

const key = 'cache/photos';
const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 9, 0, s));
const written: HistoryEntry[] = [
  { at: at(1), from: 'pending', to: 'applying', reason: 'spec changed', by: 'desired' },
  { at: at(2), from: 'applying', to: 'held', reason: 'applied', by: 'desired' },
  { at: at(20), from: 'held', to: 'applying', reason: 'grant secret rotated', by: 'check' },
  { at: at(21), from: 'applying', to: 'held', reason: 'applied', by: 'check' },
  { at: at(30), from: 'held', to: 'suspended', reason: 'suspended by an operator', by: 'command' },
];
const record = {
  _id: key,
  provider: 'cache',
  createdAt: at(0),
  stateSince: at(30),
  machine: { state: 'suspended', context: {} },
  history: written,
} as unknown as ConsumerRecord;

/** A heal written to no record, on a node, as the quiet heal notes it. */
function quietHeal(s: number, node?: string): TimelineEvent[] {
  const where = node ? { node } : {};
  const toLost: HistoryEntry = {
    at: at(s),
    from: 'held',
    to: 'lost',
    reason: 'missing: the backend has no such ACL user',
    by: 'check',
    ...where,
  };
  const toHeld: HistoryEntry = {
    at: at(s + 1),
    from: 'lost',
    to: 'held',
    reason: 'applied again',
    by: 'heal',
    ...where,
  };
  return [...timelineEventsOf(key, toLost, []), ...timelineEventsOf(key, toHeld, [toLost])];
}

const other: TimelineEvent = {
  at: at(5).getTime(),
  kind: 'lost',
  key: 'cache/other',
  state: 'lost',
  reason: 'missing',
};

describe("a consumer's history", () => {
  it('lists every transition oldest first, the heals only the timeline holds among them, with cause and node', () => {
    const earlier: TimelineEvent = {
      at: Date.UTC(2026, 11, 1),
      kind: 'lost',
      key,
      state: 'lost',
      reason: 'an earlier life',
    };
    const h = consumerHistory(record, [earlier, other, ...quietHeal(10, '10.0.0.6:6379')], null);
    expect(h.transitions.map((t) => [t.from, t.to, t.by, t.node, t.recorded])).toEqual([
      ['pending', 'applying', 'desired', null, true],
      ['applying', 'held', 'desired', null, true],
      ['held', 'lost', 'check', '10.0.0.6:6379', false],
      ['lost', 'held', 'heal', '10.0.0.6:6379', false],
      ['held', 'applying', 'check', null, true],
      ['applying', 'held', 'check', null, true],
      ['held', 'suspended', 'command', null, true],
    ]);
    expect(h).toMatchObject({ consumer: key, state: 'suspended', stateSince: at(30).toISOString() });
    expect(h.reach).toMatchObject({
      recordKeeps: HISTORY_LENGTH,
      recordFull: false,
      timelineRead: true,
      timelineOldest: new Date(Date.UTC(2026, 11, 1)).toISOString(),
      since: null,
    });
    expect(h.reach.words).toBe(
      `the record keeps its last 20 transitions: it holds all it made since ${at(0).toISOString()}; heals not written to the record come from the cache timeline in the queue's Redis (about its last 10000 losses, heals and brakes), which goes back to 2026-12-01T00:00:00.000Z`,
    );
  });

  it("lists each of its provider's node events since it was made as a line by node, in the state it found it in", () => {
    const event = (s: number, why: 'new-run-id' | 'loss-wave') => ({
      node: '10.0.0.6:6379',
      why,
      at: at(s).toISOString(),
      of: 200,
    });
    // newest first, as the provider's list keeps them; one from before the record was made is not its
    const nodeEvents = [
      event(25, 'loss-wave'),
      event(9, 'new-run-id'),
      { ...event(0, 'new-run-id'), at: '2026-12-01T00:00:00.000Z' },
    ];
    const h = consumerHistory(record, quietHeal(10, '10.0.0.6:6379'), null, nodeEvents);
    expect(h.transitions.map((t) => [t.at, t.from, t.to, t.by, t.node, t.recorded])).toEqual([
      [at(1).toISOString(), 'pending', 'applying', 'desired', null, true],
      [at(2).toISOString(), 'applying', 'held', 'desired', null, true],
      [at(9).toISOString(), 'held', 'held', 'node', '10.0.0.6:6379', false],
      [at(10).toISOString(), 'held', 'lost', 'check', '10.0.0.6:6379', false],
      [at(11).toISOString(), 'lost', 'held', 'heal', '10.0.0.6:6379', false],
      [at(20).toISOString(), 'held', 'applying', 'check', null, true],
      [at(21).toISOString(), 'applying', 'held', 'check', null, true],
      [at(25).toISOString(), 'held', 'held', 'node', '10.0.0.6:6379', false],
      [at(30).toISOString(), 'held', 'suspended', 'command', null, true],
    ]);
    expect(h.transitions.filter((t) => t.by === 'node').map((t) => t.reason)).toEqual([
      '10.0.0.6:6379 restarted at 09:00:09 (new run id): suspect, asked at once',
      '10.0.0.6:6379 lost logins at 09:00:25 (a wave of logins found missing): suspect, asked at once',
    ]);
    expect(formatHistory(h)).toContain(
      `\n${at(9).toISOString()}  held → held         node     10.0.0.6:6379  10.0.0.6:6379 restarted at 09:00:09 (new run id): suspect, asked at once\n`,
    );
  });

  it('leaves out what came before --since, says older transitions are gone once the record is full, and says an unread timeline', () => {
    expect(consumerHistory(record, quietHeal(10), at(20).getTime()).transitions.map((t) => t.to)).toEqual([
      'applying',
      'held',
      'suspended',
    ]);
    const full = {
      ...record,
      history: Array.from({ length: HISTORY_LENGTH }, (_, i): HistoryEntry => ({
        at: at(i),
        from: 'held',
        to: 'checking',
        reason: null,
      })),
    };
    const h = consumerHistory(full, null, at(3).getTime());
    expect(h.reach.words).toBe(
      `the record keeps its last 20 transitions: older ones are gone, the oldest kept is from ${at(0).toISOString()}; the cache timeline (heals not written to the record) could not be read from the queue's Redis; only transitions since ${at(3).toISOString()} are listed`,
    );
    expect(h.transitions[0]!.by).toBeNull(); // written before causes were kept
  });

  it('prints one line per transition, the node column only where one is named', () => {
    const text = formatHistory(consumerHistory(record, quietHeal(10, '10.0.0.6:6379'), null));
    const lines = text.split('\n');
    expect(lines[0]).toBe(`cache/photos: suspended since ${at(30).toISOString()}`);
    expect(lines[1]).toMatch(/^7 transitions, oldest first; the record keeps its last 20 transitions/);
    expect(lines[3]).toMatch(/^at\s+transition\s+by\s+node\s+reason$/);
    expect(lines[6]).toBe(
      `${at(10).toISOString()}  held → lost         check    10.0.0.6:6379  missing: the backend has no such ACL user (not written to the record: from the timeline)`,
    );
    expect(formatHistory(consumerHistory(record, [], null)).split('\n')[3]).toMatch(/^at\s+transition\s+by\s+reason$/);
  });
});

describe('GET /consumers/<provider>/<id>/history, served', () => {
  const sources = {
    store: { get: (k: string) => Promise.resolve(k === key ? record : null) },
    reads: { timeline: () => Promise.resolve(quietHeal(10)) },
  };

  it('answers the history as JSON', async () => {
    const answer = await historyAnswer(sources, 'cache/photos/history', '1h', at(60).getTime());
    expect(answer.code).toBe(200);
    expect(answer.body).toEqual(consumerHistory(record, quietHeal(10), at(60).getTime() - 3_600_000));
  });

  it('refuses a bad key (400), an unknown consumer (404) and a bad since (400), with a code, never echoing a control character', async () => {
    for (const path of [
      '../x/history',
      'cache/../history',
      'cache/photos/extra/history',
      `cache/${'x'.repeat(300)}/history`,
      'cache/\u001b]0;x\u0007/history',
      'cache/photos',
    ]) {
      const answer = await historyAnswer(sources, path, undefined);
      expect(answer, JSON.stringify(path)).toMatchObject({
        code: 400,
        body: { error: { code: 'CONSUMER_KEY_INVALID' } },
      });
      expect(JSON.stringify(answer.body)).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    }
    expect(await historyAnswer(sources, 'cache/nobody/history', undefined)).toMatchObject({
      code: 404,
      body: { error: { code: 'CONSUMER_UNKNOWN' } },
    });
    for (const since of ['soon', '', '\u001b[2J1h', `${'0'.repeat(40)}1h`]) {
      const answer = await historyAnswer(sources, 'cache/photos/history', since);
      expect(answer, JSON.stringify(since)).toMatchObject({ code: 400, body: { error: { code: 'ARGUMENT_INVALID' } } });
      expect((answer.body as { error: { message: string } }).error.message).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    }
  });
});
