/** A consumer whose grant secret is not there yet: it waits, quietly and in one state, until it is. */
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineFixtures } from './engine-fixture.js';

describe('a consumer waiting for its grant secret', () => {
  const fixture = engineFixtures();

  it('stays waiting between tries (never shown applying, its since kept), and is applied once the secret appears', async () => {
    const f = await fixture({
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '500ms', retryBase: '200ms', secretGrace: '30s' },
    });
    const [late] = f.consumers as [(typeof f.consumers)[0]];
    rmSync(late.secretPath);
    await f.start();

    const seen = new Set<string>();
    const sinces = new Set<string>();
    await f.until('waiting for its secret', async () => {
      const shown = (await f.status()).consumers.find((c) => c.consumer === late.key);
      return shown?.state === 'waitingForSecret';
    });
    // tries come at 200 ms, 400 ms, 800 ms…: watch several of them
    const watchUntil = Date.now() + 2500;
    while (Date.now() < watchUntil) {
      const shown = (await f.status()).consumers.find((c) => c.consumer === late.key)!;
      seen.add(shown.state);
      sinces.add(shown.since);
    }
    expect([...seen]).toEqual(['waitingForSecret']);
    expect(sinces.size).toBe(1);
    const moves = f.logsFor(late).filter((l) => l.msg.includes(' → '));
    expect(moves.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^pending → waitingForSecret: grant secret .* does not exist$/),
    ]);

    writeFileSync(late.secretPath, `${late.password}\n`, { mode: 0o600 });
    await f.until(
      'applied once its secret exists',
      async () => (await f.allHeld()) && (await f.canLogin(late)),
      10_000,
    );
  });
});
