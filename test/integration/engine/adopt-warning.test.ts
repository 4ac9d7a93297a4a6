/** A provider that adopts logins it did not make says so when the engine starts, once, naming it. */
import { describe, expect, it } from 'vitest';
import { engineFixtures } from './engine-fixture.js';

describe('adopt: true', () => {
  const fixture = engineFixtures();

  it('is said at start-up, as a warning naming the provider', async () => {
    const f = await fixture({ consumers: 1, providerLines: ['adopt: true'] });
    await f.start();
    const said = f.logs.filter((l) => l.msg.includes('adopt: true'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 40, provider: 'cache' });
    expect(said[0]!.msg).toContain(
      'provider cache has adopt: true: it takes over logins on its backend that it did not make',
    );
  });

  it('is not said when the provider does not adopt', async () => {
    const f = await fixture({ consumers: 1 });
    await f.start();
    expect(f.logs.filter((l) => l.msg.includes('adopt'))).toEqual([]);
  });
});
