import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/text/canonical-json.js';
import { sha256Hex } from '../../../src/secrets/sha256.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: [3, { z: 1, a: 2 }], a: { d: null, c: 'x' }, u: undefined })).toBe(
      '{"a":{"c":"x","d":null},"b":[3,{"a":2,"z":1}]}',
    );
  });

  it('sorts keys that look like numbers as text too', () => {
    expect(canonicalJson({ 10: 'a', 9: 'b', x: 'c' })).toBe('{"10":"a","9":"b","x":"c"}');
  });

  it('hashes as lower-case hex sha256', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
