import { describe, expect, it } from 'vitest';
import {
  decodeBrief,
  encodeBrief,
  briefRefused,
  briefState,
  type ConsumerBrief,
} from '../../../src/queue/consumer-brief.js';

describe('a record in brief', () => {
  const brief: ConsumerBrief = {
    rev: 12,
    state: 'backoff',
    since: 1_700_000_000_000,
    login: 'app photos',
    brakeCount: 3,
    reason: 'not held: missing { "x": 1 }',
    dueAt: null,
    lastCheck: { at: 1_700_000_001_000, outcome: 'not-held', detail: 'missing' },
  };

  it('reads back what was written, and gives its state without parsing the rest', () => {
    const encoded = encodeBrief(brief);
    expect(encoded.startsWith('backoff 12 {')).toBe(true);
    expect(briefState(encoded)).toBe('backoff');
    expect(decodeBrief(encoded)).toEqual(brief);
    expect(briefRefused(encoded)).toBe(false);
  });

  it('marks a consumer that keeps its accepted spec over a refused one, its state still read', () => {
    const refused = {
      ...brief,
      state: 'held' as const,
      refused: 'c.yaml:2: values.commands[0]: +@all is not allowed',
    };
    const encoded = encodeBrief(refused);
    expect(encoded.startsWith('held! 12 {')).toBe(true);
    expect(briefState(encoded)).toBe('held');
    expect(briefRefused(encoded)).toBe(true);
    expect(decodeBrief(encoded)).toEqual(refused);
  });

  it("reads a state the previous release noted under a former name in this chart's words", () => {
    const { state: _state, rev: _rev, ...rest } = brief;
    const former = 'verifying'; // the former name of `checking`
    for (const [token, refused] of [
      [former, false],
      [`${former}!`, true],
    ] as const) {
      const encoded = `${token} 12 ${JSON.stringify(rest)}`;
      expect(briefState(encoded)).toBe('checking');
      expect(briefRefused(encoded)).toBe(refused);
      expect(decodeBrief(encoded)).toEqual({ ...brief, state: 'checking' });
    }
  });

  it('reads nothing from what it did not write', () => {
    for (const encoded of [
      '',
      'held',
      'held 3',
      'held x {}',
      'held 3 not json',
      'held 3 {"since":"then"}',
      `held 3 ${JSON.stringify({ ...brief, rev: undefined, state: undefined, brakeCount: '3' })}`,
    ]) {
      expect(decodeBrief(encoded)).toBeNull();
    }
  });
});
