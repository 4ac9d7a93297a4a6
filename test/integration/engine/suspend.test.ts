/** An operator suspends a consumer: its login is left as it is, unchecked, until resumed. */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('a suspended consumer', () => {
  const fixture = engineFixtures();

  it('is neither checked nor applied until resumed, the status says so, and it is healed once resumed', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 2, timing: { verifyEvery: '500ms', checkTimeout: '500ms' } });
    const engine = await f.startHeld();
    const [paused, other] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];

    await engine.queue.send(paused.key, { type: 'SUSPEND' });
    await f.until(
      'suspended',
      async () => (await f.status()).consumers.find((c) => c.consumer === paused.key)?.state === 'suspended',
    );
    const admin = new Redis(provider.url);
    try {
      await admin.call('ACL', 'DELUSER', paused.login);
      await admin.call('ACL', 'DELUSER', other.login);
      // four intervals: the other is healed, the suspended one is left as it is
      await new Promise((r) => setTimeout(r, 2000));
      expect(await f.canLogin(other)).toBe(true);
      expect(await f.canLogin(paused)).toBe(false);
      const status = await f.status();
      const shown = status.consumers.find((c) => c.consumer === paused.key)!;
      expect(shown).toMatchObject({
        state: 'suspended',
        label: 'suspended: not checked until resumed',
        healthy: false,
        reason: 'suspended by an operator',
        nextAt: null,
      });
      expect(status.healthy).toBe(false);
      expect(f.logsFor(paused).some((l) => l.msg.startsWith('not held'))).toBe(false);

      await engine.queue.send(paused.key, { type: 'RESUME' });
      await f.until('healed once resumed', async () => (await f.canLogin(paused)) && (await f.allHeld()), 10_000);
      expect(f.logsFor(paused).map((l) => l.msg)).toContain(
        'not held (missing: the backend has no such ACL user); applying again now',
      );
    } finally {
      admin.disconnect();
    }
  });
});
