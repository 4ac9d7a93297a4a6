/**
 * A PostgreSQL that logs every statement (`log_statement = 'all'`): what holdfast sends it
 * for a whole create, rotate and remove cycle names no consumer password, and a consumer its
 * policy refuses (or whose login cannot be a role) gets no statement at all.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';

describe('postgres-roles with every statement logged', () => {
  const fixture = engineFixtures();

  it('a create, rotate and remove cycle leaves no consumer password in the server log', async () => {
    const pgb = await ownBackend('postgres', { postgresSettings: { log_statement: 'all' } });
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider: pgb,
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '900ms' },
    });
    await f.startHeld();
    const passwords = f.consumers.map((c) => c.password);
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);

    const rotated: Consumer[] = f.consumers.map((c) => ({ ...c, password: randomBytes(18).toString('base64url') }));
    for (const c of rotated) writeFileSync(c.secretPath, `${c.password}\n`, { mode: 0o600 });
    passwords.push(...rotated.map((c) => c.password));
    await f.until('the rotated passwords log in', async () =>
      (await Promise.all(rotated.map((c) => f.canLogin(c)))).every(Boolean),
    );
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(false); // the old ones no longer

    f.writeContributions([]);
    await f.until('both removed', async () => (await f.status()).consumers.every((c) => c.state === 'removed'));
    for (const c of rotated) expect(await f.canLogin(c)).toBe(false);

    const log = pgb.serverLog?.() ?? '';
    // the search can find what it looks for: every statement of the cycle is there, with the verifier sent instead
    for (const statement of ['CREATE ROLE', 'ALTER ROLE', 'DROP ROLE IF EXISTS', 'SCRAM-SHA-256$4096:'])
      expect(log).toContain(statement);
    for (const c of f.consumers) expect(log).toContain(c.login);
    for (const password of passwords)
      expect(log.includes(password), 'a consumer password in the server log').toBe(false);
  });

  it('refuses a 100-byte login, a database or a role outside policy, and quotes, spaces or ; in a login, with a reason; nothing is sent', async () => {
    const pgb = await ownBackend('postgres', { postgresSettings: { log_statement: 'all' } });
    const f = await fixture({
      adapterKind: 'postgres-roles',
      provider: pgb,
      consumers: 4,
      timing: { verifyEvery: '1s', checkTimeout: '900ms' },
    });
    const [ok, long, db, role] = f.consumers as [Consumer, Consumer, Consumer, Consumer];
    const longLogin = `l${'o'.repeat(98)}g`;
    const file = join(f.dir, 'contributions/cache.yaml');
    const item = (c: Consumer, login: string, values: string) =>
      `  - id: ${c.id}\n    login: "${login}"\n    secret: ../grants/${c.id}.secret\n    values: ${values}\n`;
    writeFileSync(
      file,
      'consumers:\n' +
        item(ok, ok.login, '{ databases: [postgres] }') +
        item(long, longLogin, '{}') +
        item(db, db.login, '{ databases: [template1] }') +
        item(role, role.login, '{ roles: [pg_read_all_data] }'),
    );
    await f.start();
    const byId = async () => new Map((await f.status()).consumers.map((c) => [c.consumer, c]));
    await f.until('one held, three rejected', async () => {
      const s = await byId();
      return s.get(ok.key)?.state === 'held' && [long, db, role].every((c) => s.get(c.key)?.state === 'rejected');
    });
    const s = await byId();
    expect(s.get(long.key)?.reason).toContain('is 100 bytes long; PostgreSQL names are at most 63 bytes');
    expect(s.get(db.key)?.reason).toContain(
      'values.databases[0]: database "template1" is not allowed by the provider\'s policy (allowed: "postgres")',
    );
    expect(s.get(role.key)?.reason).toContain(
      'values.roles[0]: role "pg_read_all_data" is a predefined PostgreSQL role that reaches the server or every tenant\'s data, withheld from every consumer',
    );

    // a login with quotes, spaces or ; does not get past the contributions file: the last good state stays
    const bads = ['a"b', 'a b', 'a;drop role postgres'];
    writeFileSync(
      file,
      'consumers:\n' +
        item(ok, ok.login, '{ databases: [postgres] }') +
        bads.map((bad, i) => item({ ...long, id: `bad${i}` }, bad.replaceAll('"', '\\"'), '{}')).join(''),
    );
    await f.until('the file with those logins refused', () =>
      f.logs.some(
        (l) =>
          l.msg.startsWith('contributions refused') && [1, 2, 3].every((i) => l.msg.includes(`consumers[${i}].login`)),
      ),
    );
    expect((await byId()).get(ok.key)?.state).toBe('held');
    expect(await f.canLogin(ok)).toBe(true);

    const log = pgb.serverLog?.() ?? '';
    expect(log).toContain(ok.login);
    for (const never of [longLogin, longLogin.slice(0, 63), db.login, role.login, 'a"b', 'a b', 'a;drop'])
      expect(log.includes(never), `${never} reached the server`).toBe(false);
  });
});
