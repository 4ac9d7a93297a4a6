/**
 * A MongoDB user's roles compared as a set of (role, db) pairs (role-set.ts). FerretDB v1.24, the test server here,
 * creates users with `roles: []` only, so the reorderings are tested here on `usersInfo` replies as mongod writes
 * them; the integration test does the same on a real mongod where one is given.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rolesDifference, type RoleEntry } from '../../../src/adapters/mongodb-users/role-set.js';

const DB = 'app';
const POOL = ['read', 'readWrite', 'dbAdmin', 'userAdmin', 'reporting', 'etl.loader', 'Read'];

/** A `usersInfo` reply for `app.u` with `roles`, as mongod 7 writes it. */
const reply = (roles: RoleEntry[]) => ({
  users: [
    {
      _id: `${DB}.u`,
      userId: { $uuid: '00000000-0000-4000-8000-000000000000' },
      user: 'u',
      db: DB,
      roles,
      mechanisms: ['SCRAM-SHA-1', 'SCRAM-SHA-256'],
    },
  ],
  ok: 1,
});

/** Each wanted role as the server or a command may spell it: `{ role, db }`, `{ role }` or a bare name. */
const spelling = (role: string) => fc.constantFrom<RoleEntry>({ role, db: DB }, { db: DB, role }, { role }, role);

describe('mongodb-users: roles compared as a set of (role, db)', () => {
  it('holds any order, repetition or spelling of the wanted roles', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...POOL), { maxLength: POOL.length }).chain((wanted) =>
          fc.tuple(
            fc.constant(wanted),
            fc
              .tuple(fc.tuple(...wanted.map(spelling)), fc.array(fc.nat(), { maxLength: 3 }))
              .chain(([entries, repeats]) => {
                const all = [
                  ...entries,
                  ...(entries.length > 0 ? repeats.map((i) => entries[i % entries.length]!) : []),
                ];
                return fc.shuffledSubarray(all, { minLength: all.length });
              }),
          ),
        ),
        ([wanted, has]) => {
          expect(rolesDifference(reply(has).users[0]!.roles, DB, wanted)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds one role more, one role less, or a role in another database, and names it', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...POOL), { minLength: 1, maxLength: POOL.length - 1 }),
        fc.constantFrom('extra', 'lacking', 'elsewhere'),
        fc.nat(),
        (wanted, change, which) => {
          const has: RoleEntry[] = wanted.map((role) => ({ role, db: DB }));
          const role = wanted[which % wanted.length]!;
          const spare = POOL.find((r) => !wanted.includes(r))!;
          if (change === 'extra') has.push({ role: spare, db: DB });
          if (change === 'lacking') has.splice(which % has.length, 1);
          if (change === 'elsewhere') has.splice(which % has.length, 1, { role, db: 'other' });
          const detail = rolesDifference(has, DB, wanted);
          if (change === 'extra') expect(detail).toBe(`roles: the backend also grants "${spare}"`);
          if (change === 'lacking') expect(detail).toBe(`roles: the backend lacks "${role}"`);
          if (change === 'elsewhere')
            expect(detail).toBe(`roles: the backend also grants "${role}" in "other"; the backend lacks "${role}"`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("compares role names as MongoDB does, case and all, and reads a missing db as the user's own", () => {
    expect(rolesDifference([{ role: 'readwrite', db: DB }], DB, ['readWrite'])).toBe(
      'roles: the backend also grants "readwrite"; the backend lacks "readWrite"',
    );
    expect(rolesDifference([{ role: 'readWrite' }, 'read'], DB, ['read', 'readWrite'])).toBeUndefined();
    expect(rolesDifference([], DB, [])).toBeUndefined();
  });

  it('is not fooled by names that join alike ("a,b" is not "a" and "b")', () => {
    expect(rolesDifference([{ role: 'a,b', db: DB }], DB, ['a', 'b'])).toBe(
      'roles: the backend also grants "a,b"; the backend lacks "a", "b"',
    );
    expect(rolesDifference([{ role: 'x', db: 'y' }], DB, ['x@y'])).toBe(
      'roles: the backend also grants "x" in "y"; the backend lacks "x@y"',
    );
  });
});
