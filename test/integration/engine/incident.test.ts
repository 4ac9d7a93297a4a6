/**
 * The incident holdfast exists for (context 120): the cache restarts without an ACL file and
 * forgets every consumer while the provisioner keeps running.
 */
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('a cache restarted without an ACL file', () => {
  const fixture = engineFixtures();

  it("is healed at each consumer's next check: every consumer authenticates again, and the log says why for each", async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 60, timing: { verifyEvery: '2s', checkTimeout: '1s' } });
    await f.startHeld();
    expect((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean)).toBe(true);

    // taken before the restart: a check may find the cache empty before restart() returns
    const restarted = Date.now();
    await provider.restart();
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);

    // one interval (2 s, jitter ±5%) and the re-applies; a loaded machine may take up to three
    const healMs = await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      3 * 2100,
    );
    console.log(`[incident] ${f.consumers.length} consumers healed ${healMs} ms after the restart (verifyEvery 2 s)`);

    for (const c of f.consumers) {
      const said = f.logsFor(c).filter((l) => (l.time as number) >= restarted);
      expect(said.map((l) => l.msg)).toContain(
        'not held (missing: the backend has no such ACL user); applying again now',
      );
    }
    await f.until('status healthy', async () => (await f.status()).healthy);
  });
});
