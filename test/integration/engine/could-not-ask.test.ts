/** A backend that refuses connections: could not ask is not evidence of loss. */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';
import { RecordingAdapter } from './test-adapters.js';

describe('a backend that cannot be asked', () => {
  const fixture = engineFixtures();

  it('re-creates nothing, asks again every interval, and the status says could not ask', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 4,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms', retryBase: '100ms' },
    });
    const adapter = new RecordingAdapter(
      redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)),
    );
    await f.startHeld(undefined, adapter);

    await provider.down();
    const downAt = Date.now();
    await f.until('every consumer could not ask', async () =>
      (await f.status()).consumers.every((c) => c.state === 'couldNotAsk'),
    );
    const first = await f.status();
    await new Promise((r) => setTimeout(r, 1500));
    const later = await f.status();

    expect(adapter.count('create', downAt)).toBe(0);
    expect(adapter.count('holds', downAt)).toBeGreaterThanOrEqual(3 * f.consumers.length);
    expect(later.healthy).toBe(false);
    for (const c of later.consumers) {
      expect(c.label).toBe('could not ask');
      expect(c.reason).toMatch(/^could not ask: /);
      expect(c.lastCheck?.outcome).toBe('could-not-ask');
      const before = first.consumers.find((x) => x.consumer === c.consumer)!;
      expect(Date.parse(c.lastCheck!.at)).toBeGreaterThan(Date.parse(before.lastCheck!.at));
    }

    // back, but empty (a restart without an ACL file): now the consumers are lost and re-applied
    await provider.up();
    await f.until('every consumer held again', () => f.allHeld(), 5000);
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
  });
});

describe('a backend that answers again', () => {
  const fixture = engineFixtures();

  it('has its could-not-ask consumers asked again within seconds, not at their next interval', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 12, timing: { verifyEvery: '20s', checkTimeout: '1s' } });
    const engine = await f.startHeld();

    await provider.down();
    // asked now (as `holdfast check` does), each finds the backend gone
    for (const c of f.consumers) await engine.queue.send(c.key, { type: 'CHECK_NOW' });
    await f.until('every consumer could not ask', async () =>
      (await f.status()).consumers.every((c) => c.state === 'couldNotAsk'),
    );
    // taken before: the engine may see the backend answer before `up` returns
    const upAt = Date.now();
    await provider.up({ keepData: true });
    // their next interval is about 20 s away; asked again as the backend answers, they are held long before
    const healMs = await f.until('every consumer held again', () => f.allHeld(), 30_000);
    console.log(
      `[could not ask] ${f.consumers.length} consumers held again ${healMs} ms after the backend came back (verifyEvery 20 s)`,
    );
    expect(healMs).toBeLessThan(10_000);
    // said as the reason: the provider's recovery asks its could-not-ask consumers, and the node answering again (a new
    // run: a restart, read as soon as the admin connection is made again) is a node event that makes every consumer
    // suspect; whichever is first asks them (the other finds fewer or none left)
    const node = new URL(provider.url).host;
    const said = f.logs.filter(
      (l) =>
        (l.time as number) >= upAt &&
        (l.msg.startsWith('cache answers again: asking its') ||
          l.msg.startsWith(`cache ${node} answers again (did not answer before): asking its`) ||
          l.msg.startsWith(`cache ${node} restarted (new run id): asking its`)),
    );
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...said.map((l) => l.consumers as number))).toBeGreaterThanOrEqual(1);
  });
});
