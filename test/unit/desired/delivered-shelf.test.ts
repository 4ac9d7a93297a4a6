/**
 * What the sync keeps of what it delivered (`src/desired/delivered-shelf.ts`), in slots of one byte array and one
 * array of logins: over any sequence of deliveries, refusals, records remembered and removals, it answers exactly as the
 * two maps it replaces (key → digest, key → login) would, slots reused included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveredShelf } from '../../../src/desired/delivered-shelf.js';
import { digestText, specDigestBytes } from '../../../src/desired/spec-digest.js';

type Step =
  | { kind: 'deliver'; key: number; spec: number; refused: boolean; login: number }
  | { kind: 'remember-removing'; key: number; login: number }
  | { kind: 'delete'; key: number };

const bytesOf = (spec: number, refused: boolean) =>
  specDigestBytes({ problems: refused ? [`refused ${spec}`] : [], specHash: spec.toString(16).padStart(64, 'a') });

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('deliver' as const),
    key: fc.nat(40),
    spec: fc.nat(5),
    refused: fc.boolean(),
    login: fc.nat(5),
  }),
  fc.record({ kind: fc.constant('remember-removing' as const), key: fc.nat(40), login: fc.nat(5) }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.nat(40) }),
);

describe('the delivered shelf', () => {
  it('answers as a map of digests and a map of logins would, over generated histories', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const shelf = new DeliveredShelf();
        const digests = new Map<string, string>();
        const logins = new Map<string, string>();
        for (const s of steps) {
          const key = `cache/c${s.key}`;
          if (s.kind === 'deliver') {
            // as the sync delivers: a refused spec keeps the login claimed before, if any
            const claims = !s.refused || shelf.login(key) === undefined;
            const login = claims ? `login_${s.login}` : undefined;
            shelf.set(key, bytesOf(s.spec, s.refused), login);
            digests.set(key, digestText(bytesOf(s.spec, s.refused)));
            if (login !== undefined) logins.set(key, login);
          } else if (s.kind === 'remember-removing') {
            shelf.set(key, undefined, `login_${s.login}`);
            digests.delete(key);
            logins.set(key, `login_${s.login}`);
          } else {
            shelf.delete(key);
            digests.delete(key);
            logins.delete(key);
          }
          expect(shelf.size).toBe(digests.size);
        }
        for (let i = 0; i <= 40; i++) {
          const key = `cache/c${i}`;
          expect(shelf.get(key)).toBe(digests.get(key));
          expect(shelf.has(key)).toBe(digests.has(key));
          expect(shelf.login(key)).toBe(logins.get(key));
        }
        expect([...shelf.keys()].sort()).toEqual([...digests.keys()].sort());
        expect(new Map(shelf.claims())).toEqual(logins);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps thousands of consumers apart as its array grows', () => {
    const shelf = new DeliveredShelf();
    for (let i = 0; i < 5000; i++) shelf.set(`cache/c${i}`, bytesOf(i, i % 9 === 0), `login_${i}`);
    expect(shelf.size).toBe(5000);
    expect(shelf.get('cache/c4321')).toBe(digestText(bytesOf(4321, false)));
    expect(shelf.get('cache/c4500')).toBe(digestText(bytesOf(4500, true)));
    expect(shelf.login('cache/c17')).toBe('login_17');
  });

  it('refuses a consumer new to it without a login (every consumer it keeps claims one)', () => {
    expect(() => new DeliveredShelf().set('cache/c1', bytesOf(1, false), undefined)).toThrow(RangeError);
  });
});
