/**
 * Rules changed back by hand, again and again: after braking at its maximum, the consumer is quarantined until someone
 * acts.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

const V = 300;
const MAX = 600;

describe('a consumer whose rules keep being widened by hand', () => {
  const fixture = engineFixtures();

  it('is quarantined after braking at brakeMax for quarantineAfter: left as it is and red, the others served, until resumed', async () => {
    const provider = sharedBackend('redis');
    const f = await fixture({
      provider,
      consumers: 2,
      timing: {
        verifyEvery: `${V}ms`,
        checkTimeout: '200ms',
        brakeMax: `${MAX}ms`,
        jitter: 0,
        retryBase: '50ms',
        quarantineAfter: `${2 * MAX}ms`,
      },
    });
    const engine = await f.startHeld();
    const [widened, other] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];
    const admin = new Redis(provider.url);
    const keysOf = async () => {
      const reply = (await admin.call('ACL', 'GETUSER', widened.login)) as unknown[] | null;
      return reply ? reply[reply.indexOf('keys') + 1] : null;
    };
    // something keeps widening the login's key patterns, however often holdfast applies it
    let widening = true;
    const widener = (async () => {
      while (widening) {
        await admin.call('ACL', 'SETUSER', widened.login, '~*');
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await f.until(
        'quarantined',
        async () => (await f.status()).consumers.find((c) => c.consumer === widened.key)?.state === 'quarantined',
        30_000,
      );
      widening = false;
      await widener;
      const quarantinedAt = Date.now();
      const said = f.logsFor(widened).map((l) => l.msg);
      expect(said.filter((m) => m.startsWith('still not held after')).length).toBeGreaterThanOrEqual(2);
      expect(
        said.filter((m) => m.startsWith('rules still differ after braking at brakeMax (600 ms) for 1.2 s or more')),
      ).toHaveLength(1);
      expect(said.find((m) => m.startsWith('rules still differ'))).toContain('(rules-differ: keys: ');

      // left as it is: the widened rule stays over several brakes' time, no apply, no check; the status is red over it
      // only
      await new Promise((r) => setTimeout(r, 4 * MAX));
      expect(await keysOf()).toBe('~*'); // every key, as it was widened
      expect(f.logsFor(widened).filter((l) => (l.time as number) >= quarantinedAt)).toEqual([]);
      const status = await f.status();
      expect(status.consumers.find((c) => c.consumer === widened.key)).toMatchObject({
        state: 'quarantined',
        label: 'quarantined: its rules keep being changed back; not applied until someone acts',
        healthy: false,
        nextAt: null,
      });
      expect(status.consumers.find((c) => c.consumer === other.key)).toMatchObject({ state: 'held', healthy: true });
      expect(status.healthy).toBe(false);

      // someone acted on what kept widening it, then resumed it: applied at once, checked, held
      await engine.queue.send(widened.key, { type: 'RESUME' });
      await f.until(
        'healed once resumed',
        async () => (await keysOf()) === `~${widened.id}:*` && (await f.allHeld()),
        10_000,
      );
      expect(await f.canLogin(widened)).toBe(true);
      await f.until(
        'checked after it was applied, and still held',
        async () => (await f.settled()) && (await f.status()).healthy,
        10_000,
      );
    } finally {
      widening = false;
      await widener;
      admin.disconnect();
    }
  });
});
