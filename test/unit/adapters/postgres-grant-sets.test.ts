/**
 * A PostgreSQL role's memberships and privileges compared as sets (grant-sets.ts, role-state.ts): the catalogs may list
 * them in any order and a name more than once (two grantors); names keep their case, as quoted identifiers do; one name
 * more or less, or NOINHERIT, is not the grant.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { roleMark } from '../../../src/adapters/postgres-roles/role-mark.js';
import { compareRole, type RoleRow } from '../../../src/adapters/postgres-roles/role-state.js';
import { postgresRolesValuesSchema, type PostgresRolesValues } from '../../../src/adapters/postgres-roles/values.js';

const NAMES = ['app', 'App', 'APP', 'readers', 'Readers', 'ledger db', 'x"y', 'sales', 'pg_monitor_x'];
const FIELDS = ['roles', 'databases', 'schemas'] as const;
const COLUMN = { roles: 'member_of', databases: 'databases', schemas: 'schemas' } as const;
const ok = { matches: true } as const;

function row(values: PostgresRolesValues, more: Partial<RoleRow> = {}): RoleRow {
  return {
    rolcanlogin: true,
    expired: false,
    valid_until: 'infinity',
    rolsuper: false,
    rolcreatedb: false,
    rolcreaterole: false,
    rolreplication: false,
    rolbypassrls: false,
    rolconnlimit: -1,
    rolpassword: null,
    comment: roleMark('ledger'),
    member_of: values.roles,
    databases: values.databases,
    schemas: values.schemas,
    rolinherit: true,
    privileged_groups: [],
    ...more,
  };
}

const names = fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 5 });
const grants = fc
  .record({ roles: names, databases: names, schemas: names })
  .map((v) => postgresRolesValuesSchema.parse(v));

/** `list` as a catalog may answer it: in another order, a name repeated. */
const answered = (list: string[]) =>
  fc.array(fc.nat(), { maxLength: 2 }).chain((repeats) => {
    const all = [...list, ...(list.length > 0 ? repeats.map((i) => list[i % list.length]!) : [])];
    return fc.shuffledSubarray(all, { minLength: all.length });
  });

describe('postgres-roles: memberships and privileges compared as sets', () => {
  it('holds them in any order, with repeats', () => {
    fc.assert(
      fc.property(
        grants.chain((v) => fc.tuple(fc.constant(v), answered(v.roles), answered(v.databases), answered(v.schemas))),
        ([values, memberOf, databases, schemas]) => {
          const have = row(values, { member_of: memberOf, databases, schemas });
          expect(compareRole(have, values, ok, 'ledger')).toEqual({ held: true });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds one name more or one less in any of them, case kept, and names it', () => {
    fc.assert(
      fc.property(grants, fc.constantFrom(...FIELDS), fc.boolean(), fc.nat(), (values, field, extra, which) => {
        const list = values[field];
        const spare = NAMES.find((n) => !list.includes(n))!;
        const dropped = list[which % Math.max(list.length, 1)];
        if (!extra && dropped === undefined) return;
        const changed = extra ? [...list, spare] : list.filter((n) => n !== dropped);
        const answer = compareRole(row(values, { [COLUMN[field]]: changed }), values, ok, 'ledger');
        expect(answer).toMatchObject({
          held: false,
          reason: field === 'roles' ? 'roles-differ' : 'grants-differ',
          detail: expect.stringContaining(
            extra ? `the backend also has "${spare}"` : `it lacks "${dropped}"`,
          ) as unknown,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('says which in words: also has, lacks', () => {
    const values = postgresRolesValuesSchema.parse({ roles: ['Readers'], databases: ['app', 'sales'] });
    expect(compareRole(row(values, { member_of: ['readers'] }), values, ok, 'ledger')).toEqual({
      held: false,
      reason: 'roles-differ',
      detail: 'roles: the backend also has "readers"; it lacks "Readers"',
    });
    expect(compareRole(row(values, { databases: ['sales', 'app', 'other', 'sales'] }), values, ok, 'ledger')).toEqual({
      held: false,
      reason: 'grants-differ',
      detail: 'databases (CONNECT): the backend also has "other"',
    });
  });

  it("holds VALID UNTIL 'infinity' and none alike, not a date to come", () => {
    const values = postgresRolesValuesSchema.parse({});
    expect(compareRole(row(values, { valid_until: null }), values, ok, 'ledger')).toEqual({ held: true });
    expect(compareRole(row(values, { valid_until: 'infinity' }), values, ok, 'ledger')).toEqual({ held: true });
    expect(compareRole(row(values, { valid_until: '2999-01-01 00:00:00+00' }), values, ok, 'ledger')).toEqual({
      held: false,
      reason: 'rules-differ',
      detail:
        "attributes: the role's password expires at 2999-01-01 00:00:00+00 (VALID UNTIL); the grant asks for no expiry",
    });
  });

  it('does not hold a NOINHERIT role: its groups would give it nothing without SET ROLE', () => {
    const values = postgresRolesValuesSchema.parse({ roles: ['readers'] });
    expect(compareRole(row(values, { rolinherit: false }), values, ok, 'ledger')).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('NOINHERIT') as unknown,
    });
  });
});
