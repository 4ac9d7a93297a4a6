/**
 * The object store's churn, measured through the engine: over held s3-identities consumers and
 * many routine checks (light and deep), the adapter sends no `CreateAccessKey` after the first
 * applies. A re-apply happens only when a check says not held.
 */
import { describe, expect, it } from 'vitest';
import type { S3IdentitiesAdapter } from '../../../src/adapters/s3-identities/index.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

describe('s3-identities: no access-key churn', () => {
  const fixture = engineFixtures();

  it('sends zero CreateAccessKey over 20 held consumers and 20 s of routine checks', async () => {
    const f = await fixture({
      adapterKind: 's3-identities',
      provider: sharedBackend('s3'),
      consumers: 20,
      timing: { verifyEvery: '1s', checkTimeout: '1s', deepCheckEvery: '4s' },
    });
    const engine = await f.startHeld();
    const adapter = engine.providers.get('cache')!.adapter as unknown as S3IdentitiesAdapter;
    await f.until('every record settled', () => f.settled(), 30_000);
    // one per consumer, or more where a first apply missed its deadline on a loaded machine and was tried again
    const firstApplies = adapter.createAccessKeyCalls;
    expect(firstApplies).toBeGreaterThanOrEqual(f.consumers.length);

    // counted on the instance the engine calls: light checks (authenticates) and deep ones (holds)
    const checks = { light: 0, deep: 0 };
    const authenticates = adapter.authenticates.bind(adapter);
    const holds = adapter.holds.bind(adapter);
    adapter.authenticates = (...args) => (checks.light++, authenticates(...args));
    adapter.holds = (...args) => (checks.deep++, holds(...args));
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 20_000));
    const churn = adapter.createAccessKeyCalls - firstApplies;
    const status = await f.status();
    console.log(
      `[s3 no-churn] ${f.consumers.length} held consumers, 20 s at verifyEvery 1 s (deep every 4 s): CreateAccessKey sent after the first applies: ${churn} (first applies: ${firstApplies}; checks meanwhile: ${checks.light} light, ${checks.deep} deep)`,
    );
    expect(churn).toBe(0);
    expect(checks.light + checks.deep).toBeGreaterThanOrEqual(10 * f.consumers.length);
    expect(status.consumers.every((c) => c.state === 'held')).toBe(true);
    // the checks did run: every consumer was checked in the last few seconds
    for (const c of status.consumers) expect(Date.parse(c.lastCheck!.at)).toBeGreaterThan(since + 15_000);
  });
});
