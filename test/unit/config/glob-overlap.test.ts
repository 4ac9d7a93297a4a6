/**
 * `globsMeet` against Redis's own matcher (ported in `test/support/redis-glob.ts`): two patterns
 * meet exactly when some name matches both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globsMeet, prefixGlob } from '../../../src/config/glob-overlap.js';
import { redisGlobMatch } from '../../support/redis-glob.js';

/** Every name over `letters` up to `length` long. */
function names(letters: string, length: number): string[] {
  const all = [''];
  for (let at = 0, n = 0; n < length; n++) {
    const end = all.length;
    for (; at < end; at++) for (const c of letters) all.push(all[at] + c);
  }
  return all;
}

/** Not the empty name: no pattern is empty, and Redis's `*` does not match it. */
const SHORT_NAMES = names('abc', 6).slice(1);
/** Steps over `a` and `b`: every kind Redis knows, sets of them negated too (so `c` stands for any other byte). */
const step = fc.constantFrom('a', 'b', '*', '?', '[ab]', '[^a]', '[a-b]', '[b-a]', '\\a', '[\\b]', '[^ab]');

describe('globsMeet', () => {
  it('meets exactly when a name matches both (every name of up to 6 bytes over a, b and c asked)', () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 3 }),
        fc.array(step, { minLength: 1, maxLength: 3 }),
        (x, y) => {
          const [a, b] = [x.join(''), y.join('')];
          // with at most 3 steps each, a shortest name both match is at most 6 bytes (each byte ends a step)
          const witness = SHORT_NAMES.find((n) => redisGlobMatch(a, n) && redisGlobMatch(b, n));
          expect(globsMeet(a, b), `${a} and ${b}: ${witness ?? 'no name'}`).toBe(witness !== undefined);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("meets a pattern made from a name both match (any pattern text, holdfast's prefixes included)", () => {
    const text = fc.string({ unit: fc.constantFrom('h', 'o', ':', '{', '}', '*', '?', '[', ']', '\\', '-', '^', 'é') });
    fc.assert(
      fc.property(text, fc.array(fc.nat({ max: 12 }), { maxLength: 4 }), (name, cuts) => {
        // a pattern that matches `name`: some of its bytes turned into `?` or `*`, the rest escaped
        const pattern = [...name]
          .map((c, i) => (cuts.includes(i) ? (i % 2 ? '?' : '*') : prefixGlob(c).slice(0, -1)))
          .join('');
        if (!redisGlobMatch(pattern, name)) return; // `?` is one byte, `é` two
        expect(globsMeet(pattern, prefixGlob(name)), `${pattern} and ${name}`).toBe(true);
        expect(globsMeet(prefixGlob(name).slice(0, -1), pattern), `${pattern} and ${name} exactly`).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('says which patterns reach holdfast:… and which cannot', () => {
    const own = prefixGlob('holdfast');
    for (const pattern of ['holdfast:*', '*', 'h*', '?oldfast*', '[gh]oldfast:*', 'hold*fast', '*:states', 'holdfast'])
      expect(globsMeet(pattern, own), pattern).toBe(true);
    for (const pattern of ['photos:*', 'holdfas', 'hold', '[^h]*', 'h[^o]*', 'x*', '\\*'])
      expect(globsMeet(pattern, own), pattern).toBe(false);
    expect(prefixGlob('a*b[c]\\')).toBe('a\\*b\\[c\\]\\\\*');
    expect(redisGlobMatch(prefixGlob('a*b[c]\\'), 'a*b[c]\\:x')).toBe(true);
    expect(redisGlobMatch(prefixGlob('a*b[c]\\'), 'aXb[c]\\:x')).toBe(false);
  });
});
