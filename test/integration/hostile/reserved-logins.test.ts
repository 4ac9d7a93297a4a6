/**
 * A contributions file that names logins that are not its consumers': the provider's admin and
 * Redis's `default`. Refused before anything is sent, said once, red; the admin keeps its password
 * and its rules, also when the entries are taken out of the file again.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';

const ADMIN = 'hfadmin';

describe('a contributions file naming the admin login or default', () => {
  const fixture = engineFixtures();

  it('is refused for those consumers alone, said once, red; the admin still logs in and its ACL GETUSER is unchanged', async () => {
    const server = await ownBackend('redis');
    const adminPassword = randomBytes(18).toString('base64url');
    const root = new Redis({
      host: server.host,
      port: server.port,
      username: server.admin.username,
      password: server.admin.password,
    });
    try {
      await root.call('ACL', 'SETUSER', ADMIN, 'on', `>${adminPassword}`, '~*', '&*', '+@all');
      // the provider's admin is its own user; `default` stays the server's
      const provider = { ...server, admin: { username: ADMIN, password: adminPassword } };
      const f = await fixture({ provider, consumers: 2, timing: { verifyEvery: '500ms', checkTimeout: '500ms' } });
      const hostile: Consumer[] = [ADMIN, 'default'].map((login, i) => ({
        id: `h${i}`,
        key: `cache/h${i}`,
        login,
        password: randomBytes(18).toString('base64url'),
        secretPath: join(f.dir, 'grants', `h${i}.secret`),
      }));
      for (const c of hostile) writeFileSync(c.secretPath, `${c.password}\n`, { mode: 0o600 });
      const file = join(f.dir, 'contributions/cache.yaml');
      const write = (consumers: Consumer[]) => {
        const items = consumers.map(
          (c) =>
            `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: { keys: ["${c.id}:*"], commands: ["+@read", "+@write", "+@connection"] }`,
        );
        writeFileSync(`${file}.new`, `consumers:\n${items.join('\n')}\n`);
        renameSync(`${file}.new`, file);
      };
      write([...f.consumers, ...hostile]);
      const before = await Promise.all([ADMIN, 'default'].map((u) => root.call('ACL', 'GETUSER', u)));

      await f.start();
      const states = async () => new Map((await f.status()).consumers.map((c) => [c.consumer, c]));
      await f.until('the normal consumers held, the hostile ones rejected', async () => {
        const s = await states();
        return (
          f.consumers.every((c) => s.get(c.key)?.state === 'held') &&
          hostile.every((c) => s.get(c.key)?.state === 'rejected')
        );
      });
      await new Promise((r) => setTimeout(r, 2_000)); // a few sync polls and checks: nothing more is said

      const status = await f.status();
      expect(status.healthy).toBe(false);
      const [asAdmin, asDefault] = hostile.map((c) => status.consumers.find((s) => s.consumer === c.key)!);
      expect(asAdmin).toMatchObject({ state: 'rejected', healthy: false });
      expect(asAdmin!.reason).toContain(
        `${file}:11: consumers[2].login: "${ADMIN}" is the admin login of provider cache; no consumer may have it`,
      );
      expect(asDefault!.reason).toMatch(
        new RegExp(`${file}:15: consumers\\[3\\]\\.login: "default" is .*; no consumer may have it`),
      );
      for (const c of hostile)
        expect(f.logsFor(c).filter((l) => l.msg.startsWith("refused by its provider's policy"))).toHaveLength(1);

      // nothing was sent for them: the admin logs in with its own password, both users as they were
      expect(await redisLogin(server, ADMIN, adminPassword)).toBe(true);
      expect(await redisLogin(server, 'default', server.admin.password)).toBe(true);
      for (const c of hostile) expect(await redisLogin(server, c.login, c.password)).toBe(false);
      expect(await Promise.all([ADMIN, 'default'].map((u) => root.call('ACL', 'GETUSER', u)))).toEqual(before);

      // taken out of the file again: the records go, the logins stay (they were never the consumers')
      write(f.consumers);
      await f.until(
        "the admin login's consumer gone",
        async () => !(await f.status()).consumers.some((c) => c.consumer === hostile[0]!.key),
      );
      expect(await redisLogin(server, ADMIN, adminPassword)).toBe(true);
      await f.until(
        'only the normal consumers left',
        async () => (await f.status()).consumers.length === f.consumers.length,
      );
      expect(
        f.logsFor(hostile[0]!).filter((l) => l.msg.includes(`login ${ADMIN} left on cache, not removed`)),
      ).toHaveLength(1);
      expect(await redisLogin(server, ADMIN, adminPassword)).toBe(true);
      expect(await redisLogin(server, 'default', server.admin.password)).toBe(true);
      expect(await Promise.all([ADMIN, 'default'].map((u) => root.call('ACL', 'GETUSER', u)))).toEqual(before);
      for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    } finally {
      root.disconnect();
    }
  });
});
