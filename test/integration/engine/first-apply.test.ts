import { afterAll, describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { EngineFixture } from './engine-fixture.js';

describe('engine: first apply', () => {
  let fixture: EngineFixture;
  afterAll(() => fixture?.stop());

  it('applies every declared consumer so it can authenticate, and status says held', async () => {
    fixture = await EngineFixture.create({
      queue: sharedBackend('redis'),
      store: sharedBackend('mongodb'),
      provider: sharedBackend('redis'),
      consumers: 5,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
    });
    await fixture.start();
    await fixture.until('all held', () => fixture.allHeld());
    for (const c of fixture.consumers) expect(await fixture.canLogin(c)).toBe(true);
    // checked at least once more, still held
    await new Promise((r) => setTimeout(r, 1500));
    const status = await fixture.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.every((c) => c.lastCheck?.outcome === 'held')).toBe(true);
  });
});
