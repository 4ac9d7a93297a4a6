import { describe, expect, it } from 'vitest';
import { decodeKeys, encodeKeys } from '../../../src/store/key-codec.js';

describe('key codec', () => {
  it('makes keys a MongoDB wire server accepts and restores them exactly', () => {
    const value = {
      'xstate.after.verify.consumer.held': 1,
      $ref: { 'a.b': ['x.y', { '%2E': true, '$and.%': null }] },
      plain: 'stays.as.is',
      when: new Date(0),
    };
    const encoded = encodeKeys(value);
    const keys = JSON.stringify(encoded).match(/"([^"]+)":/g) ?? [];
    for (const key of keys) {
      expect(key).not.toMatch(/^"\$/);
      expect(key.slice(1, -2)).not.toContain('.');
    }
    expect(decodeKeys(encoded)).toEqual(value);
  });

  it('round-trips keys that already look encoded', () => {
    for (const key of ['%', '%25', '%2E', '%24', '$%2E.', '.$', '%%2E']) {
      expect(decodeKeys(encodeKeys({ [key]: 1 }))).toEqual({ [key]: 1 });
    }
  });
});
