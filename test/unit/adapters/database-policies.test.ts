/** The policies of `postgres-roles` and `mongodb-users`: pure checks of a consumer against its provider's. */
import { describe, expect, it } from 'vitest';
import { mongodbUsers } from '../../../src/adapters/mongodb-users/index.js';
import { ADMIN_ONLY_ROLES, DATABASE_ADMIN_ROLES } from '../../../src/adapters/mongodb-users/policy.js';
import {
  POWERFUL_PREDEFINED_ROLES,
  postgresRoles,
  withheldRolesOf,
} from '../../../src/adapters/postgres-roles/index.js';

describe('postgres-roles policy', () => {
  const policy = postgresRoles.policySchema.parse({
    allowedDatabases: ['app'],
    allowedSchemas: ['public'],
    allowedRoles: ['readers'],
  });
  const check = (login: string, values: unknown) =>
    postgresRoles.violations({ id: 'c1', login, values: postgresRoles.valuesSchema.parse(values) }, policy);

  it('allows what the policy names, and nothing by default', () => {
    expect(check('app_c1', { databases: ['app'], schemas: ['public'], roles: ['readers'] })).toEqual([]);
    expect(
      postgresRoles.violations(
        { id: 'c1', login: 'app_c1', values: postgresRoles.valuesSchema.parse({ databases: ['app'] }) },
        postgresRoles.policySchema.parse({}),
      ),
    ).toEqual(['values.databases[0]: database "app" is not allowed by the provider\'s policy (allowed: none)']);
  });

  it('names each value outside the policy, by field and index', () => {
    expect(
      check('app_c1', { databases: ['app', 'postgres'], schemas: ['secret'], roles: ['pg_write_all_data'] }),
    ).toEqual([
      'values.databases[1]: database "postgres" is not allowed by the provider\'s policy (allowed: "app")',
      'values.schemas[0]: schema "secret" is not allowed by the provider\'s policy (allowed: "public")',
      'values.roles[0]: role "pg_write_all_data" is a predefined PostgreSQL role that reaches the server or every tenant\'s data, withheld from every consumer',
    ]);
  });

  it("withholds the powerful predefined roles and the operator's withheldRoles: no policy allows one, no consumer asks for one", () => {
    expect(POWERFUL_PREDEFINED_ROLES).toEqual(
      expect.arrayContaining([
        'pg_execute_server_program',
        'pg_read_server_files',
        'pg_write_server_files',
        'pg_read_all_data',
        'pg_write_all_data',
        'pg_signal_backend',
      ]),
    );
    for (const role of POWERFUL_PREDEFINED_ROLES) {
      const refused = postgresRoles.policySchema.safeParse({ allowedRoles: ['readers', role] });
      expect(refused.success, role).toBe(false);
      expect(refused.error?.issues[0]).toMatchObject({
        path: ['allowedRoles', 1],
        message: expect.stringContaining(`role "${role}" is a predefined PostgreSQL role`) as unknown,
      });
      expect(check('app_c1', { roles: [role] }), role).toEqual([
        expect.stringMatching(new RegExp(`^values\\.roles\\[0\\]: role "${role}" is a predefined`)),
      ]);
    }
    const own = postgresRoles.policySchema.parse({ allowedRoles: ['readers'], withheldRoles: ['auditors'] });
    expect(withheldRolesOf(own)).toEqual([...POWERFUL_PREDEFINED_ROLES, 'auditors']);
    expect(
      postgresRoles.violations(
        { id: 'c1', login: 'app_c1', values: postgresRoles.valuesSchema.parse({ roles: ['auditors'] }) },
        own,
      ),
    ).toEqual(['values.roles[0]: role "auditors" is withheld from every consumer by the provider\'s withheldRoles']);
    expect(
      postgresRoles.policySchema.safeParse({ allowedRoles: ['auditors'], withheldRoles: ['auditors'] }).success,
    ).toBe(false);
    // the other predefined roles (pg_monitor, pg_read_all_stats…) only where the policy names them
    expect(postgresRoles.policySchema.parse({ allowedRoles: ['pg_monitor'] }).allowedRoles).toEqual(['pg_monitor']);
  });

  it('refuses logins PostgreSQL would truncate or reserves, and quotes, spaces or ;', () => {
    expect(check('x'.repeat(63), {})).toEqual([]);
    expect(check('x'.repeat(64), {})[0]).toBe(
      `login: "${'x'.repeat(64)}" is 64 bytes long; PostgreSQL names are at most 63 bytes (the server would truncate it)`,
    );
    expect(check('é'.repeat(32), {})[0]).toContain('is 64 bytes long'); // bytes, not characters
    expect(check('pg_app', {})[0]).toContain('reserves');
    for (const login of ['a"b', 'a b', 'a;b', "it's"])
      expect(check(login, {})[0]).toMatch(/^login: .* may contain only letters/);
  });

  it('refuses a name longer than 63 bytes in the values themselves', () => {
    expect(postgresRoles.valuesSchema.safeParse({ roles: ['r'.repeat(64)] }).success).toBe(false);
  });

  it('gives each role a connection limit of 10 unless the policy says another, from 1 to 262143, never none', () => {
    expect(postgresRoles.policySchema.parse({}).connectionLimit).toBe(10);
    expect(postgresRoles.policySchema.parse({ connectionLimit: 40 }).connectionLimit).toBe(40);
    for (const limit of [-1, 0, 2.5, 262_144, '10'])
      expect(postgresRoles.policySchema.safeParse({ connectionLimit: limit }).success, String(limit)).toBe(false);
  });
});

describe('mongodb-users policy', () => {
  const check = (values: unknown, policy: unknown = {}, login = 'app') =>
    mongodbUsers.violations(
      { id: 'c1', login, values: mongodbUsers.valuesSchema.parse(values) },
      mongodbUsers.policySchema.parse(policy),
    );

  it("allows by default the consumer's own database (named after its id) and no role", () => {
    expect(check({ database: 'c1' })).toEqual([]);
    expect(check({ database: 'c2' })).toEqual([
      'values.database: "c2" is not allowed by the provider\'s policy (allowed: "c1")',
    ]);
    expect(check({ database: 'c1', roles: ['readWrite'] })).toEqual([
      'values.roles[0]: role "readWrite" is not allowed by the provider\'s policy (allowed: none)',
    ]);
  });

  it("expands {id} and {login}, and never allows MongoDB's own databases", () => {
    expect(check({ database: 'app_data' }, { allowedDatabases: ['{login}_data'] })).toEqual([]);
    expect(
      check({ database: 'admin', roles: ['readWrite'] }, { allowedDatabases: ['admin'], allowedRoles: ['readWrite'] }),
    ).toEqual(['values.database: "admin" is MongoDB\'s own database; a consumer\'s user lives in its own']);
  });

  it("never allows MongoDB's own databases in another case either", () => {
    for (const database of ['Admin', 'LOCAL', 'Config']) {
      expect(check({ database }, { allowedDatabases: [database] })).toEqual([
        `values.database: "${database}" is MongoDB's own database; a consumer's user lives in its own`,
      ]);
    }
    expect(check({ database: 'Admin' }, { allowedDatabases: ['{login}'] }, 'Admin')).toEqual([
      `values.database: "Admin" is MongoDB's own database; a consumer's user lives in its own`,
    ]); // a template that names it
  });

  it('refuses the built-in administrative roles unless the policy names them', () => {
    const wide = { allowedRoles: ['read', 'readWrite'] };
    for (const role of DATABASE_ADMIN_ROLES) {
      expect(check({ database: 'c1', roles: [role] }, wide)).toEqual([
        `values.roles[0]: administrative role "${role}" is not allowed by the provider's policy (allowed: "read", "readWrite")`,
      ]);
      expect(check({ database: 'c1', roles: [role] }, { allowedRoles: [role] })).toEqual([]);
    }
    for (const role of ADMIN_ONLY_ROLES) {
      expect(check({ database: 'c1', roles: [role] }, wide)).toEqual([
        `values.roles[0]: role "${role}" is a built-in role of MongoDB's admin database; no consumer's user is given it`,
      ]);
    }
    expect(ADMIN_ONLY_ROLES).toEqual(
      expect.arrayContaining([
        'root',
        'userAdminAnyDatabase',
        'dbAdminAnyDatabase',
        'readWriteAnyDatabase',
        'readAnyDatabase',
        'clusterAdmin',
        'clusterManager',
        'clusterMonitor',
        'hostManager',
        'enableSharding',
        'backup',
        'restore',
        '__system',
      ]),
    );
  });

  it('refuses a policy that allows a role of the admin database, naming the field', () => {
    for (const role of ADMIN_ONLY_ROLES) {
      const parsed = mongodbUsers.policySchema.safeParse({ allowedRoles: ['readWrite', role] });
      expect(parsed.success, role).toBe(false);
      expect(parsed.error?.issues[0]).toMatchObject({
        path: ['allowedRoles', 1],
        message: expect.stringContaining('built-in role of the admin database') as unknown,
      });
    }
    expect(mongodbUsers.policySchema.safeParse({ allowedRoles: ['dbOwner', 'readWrite'] }).success).toBe(true);
  });

  it('refuses a database name MongoDB refuses, and logins with quotes, spaces or ;', () => {
    expect(mongodbUsers.valuesSchema.safeParse({ database: 'a.b' }).success).toBe(false);
    expect(mongodbUsers.valuesSchema.safeParse({}).success).toBe(false); // the database is required
    for (const login of ['a"b', 'a b', 'a;b']) expect(check({ database: 'c1' }, {}, login)[0]).toMatch(/^login: /);
  });
});
