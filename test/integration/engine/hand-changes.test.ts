/** A login dropped, its password or its key patterns changed by hand: each healed at the next check. */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('changes made by hand on the backend', () => {
  const fixture = engineFixtures();

  it('are each undone at the next check, and the log says what differed', async () => {
    const provider = sharedBackend('redis');
    const f = await fixture({
      provider,
      consumers: 3,
      // a light check authenticates; a key pattern changed by hand is seen by the next deep one
      timing: { verifyEvery: '1s', checkTimeout: '500ms', deepCheckEvery: '4s' },
    });
    await f.startHeld();
    await f.until('every record settled: checks are light from now on', () => f.settled());
    const [dropped, repassworded, rekeyed] = f.consumers as [
      (typeof f.consumers)[0],
      (typeof f.consumers)[0],
      (typeof f.consumers)[0],
    ];

    const admin = new Redis(provider.url);
    const keysOf = async (login: string) => {
      const reply = (await admin.call('ACL', 'GETUSER', login)) as unknown[] | null;
      if (!reply) return null;
      const i = reply.indexOf('keys');
      return reply[i + 1];
    };
    try {
      // the engine's light-check connection authenticated as the login about to be deleted: Redis closes it
      const adapter = f.engines[0]!.providers.get('cache')!.adapter;
      const grant = {
        login: dropped.login,
        password: dropped.password,
        values: { keys: [`${dropped.id}:*`], channels: [], commands: [] },
      };
      expect(await adapter.authenticates!(grant, { signal: AbortSignal.timeout(5000) })).toBe(true);
      const changedAt = Date.now();
      await admin.call('ACL', 'DELUSER', dropped.login);
      await admin.call('ACL', 'SETUSER', repassworded.login, 'resetpass', '>changed-by-hand');
      await admin.call('ACL', 'SETUSER', rekeyed.login, 'resetkeys', '~elsewhere:*');
      expect(await f.canLogin(dropped)).toBe(false);
      expect(await f.canLogin(repassworded)).toBe(false);
      expect(await keysOf(rekeyed.login)).toBe('~elsewhere:*');

      // the next (light) check comes within one interval (1 s ± 5%); it fails, a deep one says why
      await f.until(
        'the dropped and the re-passworded healed',
        async () => (await f.canLogin(dropped)) && (await f.canLogin(repassworded)),
        3 * 1050,
      );
      // the next deep check comes within deepCheckEvery (4 s ± 5%) and one more interval
      await f.until(
        'the re-keyed healed',
        async () => (await keysOf(rekeyed.login)) === `~${rekeyed.id}:*`,
        2 * (4200 + 1050),
      );
      const said = (c: typeof dropped) =>
        f
          .logsFor(c)
          .filter((l) => (l.time as number) >= changedAt)
          .map((l) => l.msg);
      expect(said(dropped)).toContain('not held (missing: the backend has no such ACL user); applying again now');
      expect(said(repassworded).some((m) => m.startsWith('not held (password-differs: '))).toBe(true);
      expect(said(rekeyed)).toContain(
        `not held (rules-differ: keys: the backend also allows ~elsewhere:* and lacks ~${rekeyed.id}:* (the backend has "~elsewhere:*", the grant asks for "~${rekeyed.id}:*")); applying again now`,
      );
      expect(await f.canLogin({ ...repassworded, password: 'changed-by-hand' })).toBe(false);
      // deleting a login closes the connection a light check authenticated as it on; no consumer is left could-not-ask
      // for it
      expect(
        f.logs.filter((l) => (l.time as number) >= changedAt && typeof l.to === 'string' && l.to === 'couldNotAsk'),
      ).toEqual([]);
    } finally {
      admin.disconnect();
    }
  });
});
