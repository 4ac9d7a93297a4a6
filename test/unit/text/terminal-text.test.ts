import { describe, expect, it } from 'vitest';
import { formatPath } from '../../../src/config/yaml-source.js';
import { inertLines, inertText } from '../../../src/text/terminal-text.js';

const UNSAFE = /[\p{Cc}\p{Cf}]/u;

describe('text the CLI prints', () => {
  it('has every C0 and C1 control and Unicode format character escaped as JSON does', () => {
    const hostile = 'a\u001b[2J\u0007b\u009b31mc\u202ed\u200de\u{e0001}f\u007fg\th\ni';
    expect(inertText(hostile)).toBe(
      'a\\u001b[2J\\u0007b\\u009b31mc\\u202ed\\u200de\\udb40\\udc01f\\u007fg\\u0009h\\u000ai',
    );
    expect(inertLines(hostile)).toBe(
      'a\\u001b[2J\\u0007b\\u009b31mc\\u202ed\\u200de\\udb40\\udc01f\\u007fg\\u0009h\ni',
    );
    expect(UNSAFE.test(inertText(hostile))).toBe(false);
    // JSON stays JSON, with the same meaning
    const json = JSON.stringify({ reason: hostile });
    expect(JSON.parse(inertLines(json))).toEqual({ reason: hostile });
  });

  it('names an odd YAML key quoted, controls escaped, and a long one by its start', () => {
    expect(formatPath(['consumers', 0, 'values', 'keys'])).toBe('consumers[0].values.keys');
    expect(formatPath(['consumers', 0, '\u001b[2Jx'])).toBe('consumers[0]["\\u001b[2Jx"]');
    expect(formatPath(['a.b'])).toBe('["a.b"]');
    expect(formatPath(['consumers', 0, 'k'.repeat(1000)])).toBe(`consumers[0]["${'k'.repeat(128)}"…]`);
  });
});
