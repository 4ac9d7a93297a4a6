/** The seal on what the status and the checks conclude from the queue's Redis: made only with holdfast's key. */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NoteSeal, type NoteKind } from '../../../src/queue/note-seal.js';

const KINDS: NoteKind[] = ['state', 'brief', 'memo', 'removals'];

describe('NoteSeal', () => {
  it('opens what it sealed, as that kind of that field only', () => {
    const seal = new NoteSeal(randomBytes(32));
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), fc.string(), fc.string(), (kind, field, text) => {
        const sealed = seal.seal(kind, field, text);
        expect(seal.open(kind, field, sealed)).toBe(text);
        expect(seal.open(kind, `${field}x`, sealed)).toBeNull();
        for (const other of KINDS.filter((k) => k !== kind)) expect(seal.open(other, field, sealed)).toBeNull();
      }),
    );
  });

  it('reads a value written without its key (by hand, another key, or a release before seals) as absent, and counts it', () => {
    const told: string[] = [];
    const seal = new NoteSeal(randomBytes(32), (kind, field) => told.push(`${kind} ${field}`));
    const elsewhere = new NoteSeal(randomBytes(32));
    expect(seal.open('state', 'cache/a', 'held 40')).toBeNull();
    expect(seal.open('state', 'cache/a', elsewhere.seal('state', 'cache/a', 'held 40'))).toBeNull();
    const sealed = seal.seal('state', 'cache/a', 'lost 3');
    expect(seal.open('state', 'cache/a', sealed.replace('lost', 'held'))).toBeNull();
    expect(seal.open('state', 'cache/a', null)).toBeNull(); // absent: not counted
    expect(told).toEqual(['state cache/a', 'state cache/a', 'state cache/a']);
    expect(seal.unsealedSeen.state).toBe(3);
  });

  it("keeps a state's first tokens where the noting script reads them", () => {
    const sealed = new NoteSeal(randomBytes(32)).seal('state', 'cache/a', 'held 12');
    expect(/^\S+ (\d+)/.exec(sealed)?.[1]).toBe('12');
  });
});
