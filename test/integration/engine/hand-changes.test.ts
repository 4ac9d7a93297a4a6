/** A login dropped, its password or its key patterns changed by hand: each healed at the next check. */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { EngineFixture } from './engine-fixture.js';

describe('changes made by hand on the backend', () => {
  let fixture: EngineFixture | undefined;
  afterAll(() => fixture?.stop());

  it('are each undone at the next check, and the log says what differed', async () => {
    const provider = sharedBackend('redis');
    fixture = await EngineFixture.create({
      queue: sharedBackend('redis'),
      store: sharedBackend('mongodb'),
      provider,
      consumers: 3,
      // every check deep: a key pattern changed by hand is seen only by a deep check (light ones authenticate)
      timing: { verifyEvery: '1s', checkTimeout: '500ms', deepCheckEvery: '1s' },
    });
    const f = fixture;
    await f.start();
    await f.until('every consumer held', () => f.allHeld());
    const [dropped, repassworded, rekeyed] = f.consumers as [typeof f.consumers[0], typeof f.consumers[0], typeof f.consumers[0]];

    const admin = new Redis(provider.url);
    const keysOf = async (login: string) => {
      const reply = (await admin.call('ACL', 'GETUSER', login)) as unknown[] | null;
      if (!reply) return null;
      const i = reply.indexOf('keys');
      return reply[i + 1];
    };
    try {
      const changedAt = Date.now();
      await admin.call('ACL', 'DELUSER', dropped.login);
      await admin.call('ACL', 'SETUSER', repassworded.login, 'resetpass', '>changed-by-hand');
      await admin.call('ACL', 'SETUSER', rekeyed.login, 'resetkeys', '~elsewhere:*');
      expect(await f.canLogin(dropped)).toBe(false);
      expect(await f.canLogin(repassworded)).toBe(false);
      expect(await keysOf(rekeyed.login)).toBe('~elsewhere:*');

      // the next check comes within one interval (1 s ± 5%)
      await f.until(
        'all three healed',
        async () => (await f.canLogin(dropped)) && (await f.canLogin(repassworded)) && (await keysOf(rekeyed.login)) === `~${rekeyed.id}:*`,
        1050 + 2000,
      );
      const said = (c: typeof dropped) => f.logsFor(c).filter((l) => (l.time as number) >= changedAt).map((l) => l.msg);
      expect(said(dropped)).toContain('not held (missing: the backend has no such ACL user); applying again now');
      expect(said(repassworded).some((m) => m.startsWith('not held (password-differs: '))).toBe(true);
      expect(said(rekeyed)).toContain(
        `not held (rules-differ: keys: the backend has "~elsewhere:*", the grant asks for "~${rekeyed.id}:*"); applying again now`,
      );
      expect(await f.canLogin({ ...repassworded, password: 'changed-by-hand' })).toBe(false);
    } finally {
      admin.disconnect();
    }
  });
});
