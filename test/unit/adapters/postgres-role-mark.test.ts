/** The mark on a PostgreSQL role (its comment) and the deep comparison's reading of it and of withheld rights. */
import { describe, expect, it } from 'vitest';
import { LEGACY_MARK, roleMark, roleOwner } from '../../../src/adapters/postgres-roles/role-mark.js';
import { compareRole, type RoleRow } from '../../../src/adapters/postgres-roles/role-state.js';
import { postgresRolesValuesSchema } from '../../../src/adapters/postgres-roles/values.js';

describe('postgres-roles role mark', () => {
  it('names the provider, and reads whose a comment says the role is', () => {
    expect(roleMark('ledger')).toBe('managed by holdfast (provider ledger)');
    expect(roleOwner('managed by holdfast (provider ledger)', 'ledger')).toEqual({ kind: 'ours' });
    expect(roleOwner('managed by holdfast (provider cache.eu-1)', 'ledger')).toEqual({
      kind: 'provider',
      provider: 'cache.eu-1',
    });
    expect(roleOwner(LEGACY_MARK, 'ledger')).toEqual({ kind: 'legacy' });
    expect(roleOwner(null, 'ledger')).toEqual({ kind: 'none', comment: null });
    expect(roleOwner('managed by holdfast (provider ledger) ', 'ledger')).toEqual({
      kind: 'none',
      comment: 'managed by holdfast (provider ledger) ',
    });
  });
});

describe('postgres-roles deep comparison', () => {
  const values = postgresRolesValuesSchema.parse({});
  const row = (more: Partial<RoleRow> = {}): RoleRow => ({
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
    member_of: [],
    databases: [],
    schemas: [],
    rolinherit: true,
    privileged_groups: [],
    ...more,
  });
  const ok = { matches: true } as const;

  it("holds only a role with this provider's mark", () => {
    expect(compareRole(row(), values, ok, 'ledger')).toEqual({ held: true });
    expect(compareRole(row(), values, ok, 'cache')).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('belongs to provider "ledger"') as unknown,
    });
    expect(compareRole(row({ comment: LEGACY_MARK }), values, ok, 'ledger')).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('re-marked as provider "ledger"') as unknown,
    });
    expect(compareRole(row({ comment: null }), values, ok, 'ledger')).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('its comment is empty') as unknown,
    });
  });

  it('names each withheld attribute, and a group the role could SET ROLE to', () => {
    const a = compareRole(
      row({ rolsuper: true, rolcreaterole: true, rolcreatedb: true, rolreplication: true, rolbypassrls: true }),
      values,
      ok,
      'ledger',
    );
    expect(a).toMatchObject({ held: false, reason: 'rules-differ' });
    for (const word of ['SUPERUSER', 'CREATEDB', 'CREATEROLE', 'REPLICATION', 'BYPASSRLS'])
      expect(a.held ? '' : a.detail).toContain(word);
    expect(compareRole(row({ privileged_groups: ['ops (SUPERUSER)'] }), values, ok, 'ledger')).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('SET ROLE to ops (SUPERUSER)') as unknown,
    });
  });
});
