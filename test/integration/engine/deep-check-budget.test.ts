/**
 * Deep checks as often as the provider's budget of the backend allows: 30 consumers on a cache
 * have their rules compared every few seconds (not every hour), so a key pattern widened by
 * hand is found and put back within about one interval and the re-apply; the status and
 * `/metrics` say the interval in force.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { formatStatus } from '../../../src/status/format-status.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('the deep-check budget', () => {
  const fixture = engineFixtures();

  it("compares a small fleet's rules within seconds: a key pattern widened by hand is rules-differ and put back", async () => {
    const provider = sharedBackend('redis');
    // deepCheckBudget and deepCheckEvery: their defaults (1% of the cache, 1 h)
    const f = await fixture({ provider, consumers: 30, timing: { verifyEvery: '2s', checkTimeout: '1500ms' } });
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    await f.until('every record settled: checks are light until the next deep one', () => f.settled());

    // 30 consumers × 1 ms of the cache's CPU per ACL GETUSER / 1% = every 3 s, not every hour
    expect(engine.providers.get('cache')!.fleet.consumers).toBe(30);
    const status = await f.status();
    expect(status.providers.find((p) => p.provider === 'cache')?.deepCheckEveryMs).toBe(3_000);
    expect(formatStatus(status)).toContain(
      'provider cache: 30 consumers (30 held), 30 declared, rules compared every 3s',
    );
    expect(await metrics.text()).toMatch(/^holdfast_deep_check_interval_seconds\{provider="cache"\} 3$/m);

    const admin = new Redis(provider.url);
    const keysOf = async (login: string) => {
      const reply = (await admin.call('ACL', 'GETUSER', login)) as unknown[] | null;
      return reply ? reply[reply.indexOf('keys') + 1] : null;
    };
    try {
      const widened = f.consumers[7]!;
      const changedAt = Date.now();
      await admin.call('ACL', 'SETUSER', widened.login, 'resetkeys', '~other:*');
      expect(await keysOf(widened.login)).toBe('~other:*');
      // the light check (an AUTH) passes; the next deep one comes within 3 s (± 10%) and one interval (2 s): a generous
      // bound
      const healedMs = await f.until(
        'the widened key pattern put back',
        async () => (await keysOf(widened.login)) === `~${widened.id}:*`,
        20_000,
      );
      console.log(
        `deep-check budget: a key pattern widened by hand put back ${healedMs} ms later (30 consumers, verifyEvery 2s, deep interval 3s)`,
      );
      const said = f
        .logsFor(widened)
        .filter((l) => (l.time as number) >= changedAt)
        .map((l) => l.msg);
      expect(said).toContain(
        `not held (rules-differ: keys: the backend also allows ~other:* and lacks ~${widened.id}:* (the backend has "~other:*", the grant asks for "~${widened.id}:*")); applying again now`,
      );
    } finally {
      admin.disconnect();
    }
  });
});
