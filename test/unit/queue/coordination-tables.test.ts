import { describe, expect, it } from 'vitest';
import { consumerEntries, coordinationKeys, holdfastPrefix } from '../../../src/queue/coordination/keys.js';
import { SCRIPTS, scriptArgs } from '../../../src/queue/coordination/scripts.js';
import {
  checkMemoCodec,
  decodeJson,
  decodeRevision,
  orphanReportCodec,
  pauseCodec,
} from '../../../src/queue/coordination/values.js';

const keys = coordinationKeys(holdfastPrefix('{hf}'));

describe('the key table', () => {
  it('keeps the names existing data is stored under', () => {
    expect({
      locks: keys.locks,
      lock: keys.lock('cache/c1'),
      revs: keys.revs,
      memos: keys.memos,
      states: keys.states,
      briefs: keys.briefs,
      couldNotAsk: keys.couldNotAsk('cache'),
      suspects: keys.suspects('cache'),
      suspectEvent: keys.suspectEvent('cache'),
      checked: keys.checked('cache'),
      paused: keys.paused('cache'),
      probe: keys.probe('cache'),
      orphans: keys.orphans('cache'),
      confirmRemovals: keys.confirmRemovals('cache'),
      alive: keys.alive,
      storeDown: keys.storeDown,
    }).toEqual({
      locks: '{hf}:holdfast:locks',
      lock: '{hf}:holdfast:lock:cache/c1',
      revs: '{hf}:holdfast:revs',
      memos: '{hf}:holdfast:checks',
      states: '{hf}:holdfast:states',
      briefs: '{hf}:holdfast:briefs',
      couldNotAsk: '{hf}:holdfast:could-not-ask:cache',
      suspects: '{hf}:holdfast:suspects:cache',
      suspectEvent: '{hf}:holdfast:suspect-event:cache',
      checked: '{hf}:holdfast:checked:cache',
      paused: '{hf}:holdfast:paused:cache',
      probe: '{hf}:holdfast:probe:cache',
      orphans: '{hf}:holdfast:orphans:cache',
      confirmRemovals: '{hf}:holdfast:confirm-removals:cache',
      alive: '{hf}:holdfast:alive',
      storeDown: '{hf}:holdfast:store-down',
    });
  });

  it('names every entry a consumer has, for forgetting it', () => {
    expect(consumerEntries(keys, 'cache')).toEqual({
      hashes: [
        '{hf}:holdfast:revs',
        '{hf}:holdfast:checks',
        '{hf}:holdfast:states',
        '{hf}:holdfast:briefs',
        '{hf}:holdfast:due-epochs',
        '{hf}:holdfast:due-waits',
        '{hf}:holdfast:findings:cache',
        '{hf}:holdfast:contested-why:cache',
      ],
      set: '{hf}:holdfast:could-not-ask:cache',
      suspects: '{hf}:holdfast:suspects:cache',
      sortedSets: [
        '{hf}:holdfast:checked:cache',
        '{hf}:holdfast:due',
        '{hf}:holdfast:findings-at:cache',
        '{hf}:holdfast:contested:cache',
      ],
    });
  });
});

describe('the script table', () => {
  it('builds each script’s KEYS and ARGV from named arguments, the key count first', () => {
    const memo = { at: 1_700_000_000_000, outcome: 'held' as const, detail: null, rev: 3, deepAt: null };
    const releases = [
      {
        key: 'cache/c1',
        provider: 'cache',
        token: 't',
        memo: JSON.stringify(memo),
        memoAt: memo.at,
        asked: 'asked' as const,
        askedAt: memo.at - 5,
      },
      { key: 'db/c2', provider: 'db', token: 'u', memo: null, memoAt: null, asked: undefined, askedAt: null },
      {
        key: 'cache/c3',
        provider: 'cache',
        token: 'v',
        memo: null,
        memoAt: null,
        asked: 'could-not-ask' as const,
        askedAt: null,
      },
    ];
    // each provider's keys once, its consumers naming it by its place (1, 2…)
    expect(scriptArgs(SCRIPTS.release, keys, { releases })).toEqual([
      12,
      '{hf}:holdfast:locks',
      '{hf}:holdfast:checks',
      '{hf}:holdfast:due',
      '{hf}:holdfast:due-waits',
      '{hf}:holdfast:could-not-ask:cache',
      '{hf}:holdfast:checked:cache',
      '{hf}:holdfast:suspects:cache',
      '{hf}:holdfast:suspect-cut:cache',
      '{hf}:holdfast:could-not-ask:db',
      '{hf}:holdfast:checked:db',
      '{hf}:holdfast:suspects:db',
      '{hf}:holdfast:suspect-cut:db',
      't',
      'cache/c1',
      JSON.stringify(memo),
      'asked',
      '1700000000000',
      '1699999999995',
      1,
      'u',
      'db/c2',
      '',
      '',
      '',
      '',
      2,
      'v',
      'cache/c3',
      '',
      'could-not-ask',
      '',
      '',
      1,
    ]);
    expect(
      scriptArgs(SCRIPTS.claim, keys, {
        claims: [
          { key: 'cache/c1', token: 't', ttlMs: 500 },
          { key: 'cache/c2', token: 'u', ttlMs: 600 },
        ],
      }),
    ).toEqual([
      7,
      '{hf}:holdfast:locks',
      '{hf}:holdfast:revs',
      '{hf}:holdfast:checks',
      '{hf}:holdfast:lock:cache/c1',
      '{hf}:holdfast:removed:cache/c1',
      '{hf}:holdfast:lock:cache/c2',
      '{hf}:holdfast:removed:cache/c2',
      't',
      'cache/c1',
      500,
      'u',
      'cache/c2',
      600,
    ]);
    expect(scriptArgs(SCRIPTS.markRemoved, keys, { key: 'cache/c1', at: 1700, ttlMs: 9000 })).toEqual([
      1,
      '{hf}:holdfast:removed:cache/c1',
      1700,
      9000,
    ]);
    expect(
      scriptArgs(SCRIPTS.noteBriefs, keys, {
        provider: 'cache',
        entries: [
          { key: 'cache/c1', rev: 2, state: 'held 2', brief: 'b', heldSince: 5 },
          { key: 'cache/c2', rev: 1, state: 'lost 1', brief: 'c', heldSince: null },
        ],
      }),
    ).toEqual([
      3,
      '{hf}:holdfast:states',
      '{hf}:holdfast:briefs',
      '{hf}:holdfast:checked:cache',
      ...['cache/c1', 2, 'held 2', 'b', 5],
      ...['cache/c2', 1, 'lost 1', 'c', ''],
    ]);
  });

  it('reads each reply without trusting its shape', () => {
    expect(SCRIPTS.claim.reply([1, '4', null, '1700', 0, null, null, null])).toEqual([
      { taken: true, rev: '4', memo: null, removed: '1700' },
      { taken: false, rev: null, memo: null, removed: null },
    ]);
    // a consumer's reply cut short is no reply: nothing is returned to its caller
    expect(SCRIPTS.claim.reply([1, '4', null])).toEqual([]);
    expect(SCRIPTS.claim.reply('OK')).toEqual([]);
    expect(SCRIPTS.release.reply([3, 1, 'x', 0, 5])).toEqual([
      { count: 3, suspect: true },
      { count: 0, suspect: false },
    ]);
    expect(SCRIPTS.release.reply('OK')).toEqual([]);
    expect(SCRIPTS.takeCouldNotAsk.reply(['a', 2, 'b'])).toEqual(['a', 'b']);
  });
});

describe('the values read back', () => {
  it('decodes what was written', () => {
    const memo = { at: 1, outcome: 'could-not-ask' as const, detail: 'timed out', rev: 7, deepAt: 0 };
    expect(decodeJson(checkMemoCodec, JSON.stringify(memo))).toEqual(memo);
    expect(decodeJson(pauseCodec, JSON.stringify({ since: '2024-01-01T00:00:00.000Z', reason: 'r' }))).toEqual({
      since: '2024-01-01T00:00:00.000Z',
      reason: 'r',
    });
    expect(decodeJson(orphanReportCodec, JSON.stringify({ at: 'a', prefix: 'p', logins: ['x'] }))).toEqual({
      at: 'a',
      prefix: 'p',
      logins: ['x'],
    });
    expect(decodeRevision('12')).toBe(12);
  });

  it('reads a check memo written before the revision was named rev', () => {
    const former = { at: 1, outcome: 'held' as const, detail: null, epoch: 7, deepAt: 0 };
    expect(decodeJson(checkMemoCodec, JSON.stringify(former))).toEqual({
      at: 1,
      outcome: 'held',
      detail: null,
      rev: 7,
      deepAt: 0,
    });
  });

  it('treats what does not decode as absent', () => {
    for (const raw of [
      null,
      '',
      'not json {',
      '[1,2]',
      '{"at":"yesterday"}',
      JSON.stringify({ at: 1, outcome: 'fine', detail: null, rev: 1, deepAt: null }),
    ]) {
      expect(decodeJson(checkMemoCodec, raw)).toBeNull();
    }
    expect(decodeJson(pauseCodec, '{"since":1}')).toBeNull();
    expect(decodeJson(orphanReportCodec, '{"at":"a","prefix":"p","logins":"x"}')).toBeNull();
    for (const raw of [null, '', 'abc', '-1', '1.5']) expect(decodeRevision(raw)).toBeNull();
  });
});
