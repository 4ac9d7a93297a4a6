import { describe, expect, it } from 'vitest';
import { durationSchema, formatDuration, parseDuration } from '../../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['2m30s', 150_000],
    ['1s500ms', 1_500],
    ['0s', 0],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['60', '', '-5s', '5x', '1.5h', '30m1h', ' 5s', '5 s', 's'])(
    'rejects %j, saying what is accepted',
    (text) => {
      expect(() => parseDuration(text)).toThrow(/expected a duration such as 500ms, 30s, 5m, 1h, 1d or 1h30m/);
    },
  );

  it('formats milliseconds back into the same notation', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(1_500)).toBe('1s500ms');
    expect(formatDuration(0)).toBe('0s');
  });
});

describe('durationSchema', () => {
  it('transforms a duration string into milliseconds', () => {
    expect(durationSchema.parse('1h30m')).toBe(5_400_000);
  });

  it('rejects a bare number, saying it has no unit', () => {
    const result = durationSchema.safeParse(60);
    expect(result.error?.issues[0]?.message).toMatch(/a bare number like 60 has no unit/);
  });

  it('rejects zero and unknown units', () => {
    expect(durationSchema.safeParse('0s').error?.issues[0]?.message).toBe('must be more than zero');
    expect(durationSchema.safeParse('3w').error?.issues[0]?.message).toMatch(/^expected a duration .*; got "3w"$/);
  });
});
