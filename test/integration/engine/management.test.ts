/**
 * Per-provider management: `observe` checks and reports but never creates, changes or removes; `no-delete` leaves a
 * removed consumer's login.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures, readable, type Consumer } from './engine-fixture.js';
import { RecordingAdapter } from './test-adapters.js';

async function aclUser(login: string): Promise<unknown> {
  const admin = new Redis(sharedBackend('redis').url);
  try {
    return await admin.call('ACL', 'GETUSER', login);
  } finally {
    admin.disconnect();
  }
}

const COMMANDS = ['+@read', '+@write', '+@connection'];

describe('per-provider management', () => {
  const fixture = engineFixtures();

  it('observe: adopts what the backend holds, reports a login deleted by hand and one never made, and creates or removes nothing', async () => {
    const f = await fixture({
      consumers: 3,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms' },
      providerLines: ['management: observe'],
    });
    const [kept, deleted, never] = f.consumers as [Consumer, Consumer, Consumer];
    const admin = redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!));
    const signal = () => ({ signal: AbortSignal.timeout(5000) });
    for (const c of [kept, deleted])
      await admin.create(
        { login: c.login, password: c.password, values: { keys: [`${c.id}:*`], channels: [], commands: COMMANDS } },
        signal(),
      );
    const recorder = new RecordingAdapter(
      redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)),
    );
    await f.start(undefined, recorder);
    const stateOf = async (c: Consumer) => (await f.status()).consumers.find((s) => s.consumer === c.key);
    await f.until(
      'two held, one reported',
      async () => (await f.status()).consumers.map((c) => c.state).join() === 'held,held,observedNotHeld',
    );
    expect((await stateOf(never))!.reason).toBe('not held (missing: the backend has no such ACL user)');

    await admin.remove(deleted.login, signal());
    await f.until(
      'the deleted login reported',
      async () => (await stateOf(deleted))?.state === 'observedNotHeld',
      10_000,
    );
    await new Promise((r) => setTimeout(r, 2000)); // several intervals
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(status.consumers.find((c) => c.consumer === deleted.key)).toMatchObject({
      state: 'observedNotHeld',
      label: 'not held; observe only, not applied',
      healthy: false,
    });
    expect(await aclUser(deleted.login)).toBeNull();
    expect(await aclUser(never.login)).toBeNull();
    expect(recorder.count('create')).toBe(0);
    expect(recorder.count('holds')).toBeGreaterThan(6);
    for (const c of [deleted, never]) {
      expect(
        f
          .logsFor(c)
          .filter((l) => l.level === 40)
          .map((l) => l.msg),
      ).toEqual([
        'not held (missing: the backend has no such ACL user); its provider only observes: reported, not applied',
      ]);
    }
    const record = readable(await f.engines[0]!.store.get(deleted.key))!;
    expect(record.history.filter((h) => h.to === 'observedNotHeld')).toHaveLength(1);

    // made again by hand: held again; removed from the file: the login is left
    await admin.create(
      {
        login: deleted.login,
        password: deleted.password,
        values: { keys: [`${deleted.id}:*`], channels: [], commands: COMMANDS },
      },
      signal(),
    );
    await f.until('held again', async () => (await stateOf(deleted))?.state === 'held', 10_000);
    f.writeContributions([kept, deleted]);
    await f.until('never is no longer managed', async () => (await f.status()).consumers.length === 2, 10_000);
    f.writeContributions([deleted]);
    await f.until('kept is no longer managed', async () => (await f.status()).consumers.length === 1, 10_000);
    expect(await f.canLogin(kept)).toBe(true);
    expect(recorder.count('remove')).toBe(0);
    expect(recorder.count('create')).toBe(0);
    await admin.remove(kept.login, signal());
    await admin.remove(deleted.login, signal());
    await admin.close();
  });

  it('no-delete: a consumer removed from the file stops being managed, its login left and its record gone', async () => {
    const f = await fixture({
      consumers: 3,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms' },
      providerLines: ['management: no-delete'],
    });
    const [a, b, c] = f.consumers as [Consumer, Consumer, Consumer];
    const engine = await f.startHeld();
    f.writeContributions([a, c]);
    await f.until('b no longer managed', async () => (await f.status()).consumers.length === 2, 10_000);
    expect(await engine.store.get(b.key)).toBeNull();
    expect(await f.canLogin(b)).toBe(true);
    expect(await aclUser(b.login)).not.toBeNull();
    expect(f.logsFor(b).map((l) => l.msg)).toContain(
      `removing → removed: no longer managed; login ${b.login} left on cache (management: no-delete); record deleted`,
    );
    // the others are still managed: a login deleted by hand is made again
    const admin = new Redis(sharedBackend('redis').url);
    await admin.call('ACL', 'DELUSER', a.login);
    await admin.call('ACL', 'DELUSER', b.login);
    admin.disconnect();
    await f.until('a healed', () => f.canLogin(a), 10_000);
  });
});
