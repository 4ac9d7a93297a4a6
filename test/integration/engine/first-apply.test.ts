import { describe, expect, it } from 'vitest';
import { engineFixtures } from './engine-fixture.js';

describe('engine: first apply', () => {
  const fixture = engineFixtures();

  it('applies every declared consumer so it can authenticate, and status says held', async () => {
    const f = await fixture({ consumers: 5, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    await f.startHeld();
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    // checked at least once more, still held
    await new Promise((r) => setTimeout(r, 1500));
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.every((c) => c.lastCheck?.outcome === 'held')).toBe(true);
  });
});
