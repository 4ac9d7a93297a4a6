/**
 * Suspects held longer than a minute, end to end: a running `holdfast run --http` on a real Redis, scraped by a real
 * Prometheus with the shipped rules. The cache's node has an event (as a worker notes it, in the queue's Redis) and
 * then does not answer: its consumers stay suspect, `holdfast_suspect_consumers` counts them by provider and node, and
 * `HoldfastSuspectsNotAsked` fires once they have been for a minute; the cache answers again, every consumer is asked,
 * the gauge drops and the alert resolves.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connectCoordination } from '../../../src/engine/connect.js';
import { ownBackend } from '../../backends/index.js';
import { startScrapedHoldfast, type ScrapedHoldfast } from '../../support/scraped-holdfast.js';
import { EngineFixture } from '../engine/engine-fixture.js';
import { until } from '../../support/until.js';

const CONSUMERS = 5;

describe('suspects not asked for a minute', () => {
  let fixture: EngineFixture | undefined;
  let scene: ScrapedHoldfast | undefined;
  afterAll(async () => {
    scene?.kill();
    await fixture?.stop();
  });

  it('fire HoldfastSuspectsNotAsked naming provider and node, which resolves once the node answers and all are asked', async () => {
    const backend = await ownBackend('redis');
    fixture = await EngineFixture.create({
      provider: backend,
      consumers: CONSUMERS,
      timing: { verifyEvery: '60s', checkTimeout: '1s' },
    });
    const f = fixture;
    scene = await startScrapedHoldfast(f, CONSUMERS);
    const { prometheus, said, seen } = scene;
    const node = `${backend.host}:${backend.port}`;
    const suspectAlerts = () => scene!.alertsNamed('HoldfastSuspectsNotAsked');

    // the node goes, right after an event a worker noted: its consumers are suspect and cannot be asked
    await backend.down();
    const { redis, coordination } = connectCoordination(f.config);
    afterAll(() => redis.disconnect());
    const eventAt = Date.now();
    const made = await coordination.signals.markSuspects('cache', {
      node,
      why: 'new-run-id',
      at: new Date(eventAt).toISOString(),
    });
    expect(made).toHaveLength(CONSUMERS);
    await until(
      'the suspects counted by provider and node',
      async () => {
        const [counted] = await prometheus.query(`holdfast_suspect_consumers{provider="cache",node="${node}"}`);
        return counted?.value === CONSUMERS ? true : undefined;
      },
      30_000,
      seen,
    );
    // held for less than a minute: pending, not firing
    expect((await suspectAlerts()).filter((a) => a.state === 'firing')).toEqual([]);
    const firing = await until(
      'HoldfastSuspectsNotAsked firing',
      async () => (await suspectAlerts()).find((a) => a.state === 'firing'),
      120_000,
      seen,
    );
    const firedAfterS = (Date.now() - eventAt) / 1000;
    expect(firedAfterS).toBeGreaterThanOrEqual(60);
    expect(firing.labels).toMatchObject({
      alertname: 'HoldfastSuspectsNotAsked',
      severity: 'critical',
      provider: 'cache',
      node,
    });
    expect(firing.annotations.summary).toBe(
      `holdfast: ${CONSUMERS} consumer(s) of provider cache not asked for over a minute since node ${node}'s event`,
    );

    // the node answers again: every consumer asked (and healed), the gauge drops, the alert resolves
    const upAt = Date.now();
    await backend.up({ keepData: false });
    await until(
      'every consumer authenticates again',
      async () => ((await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean) ? true : undefined),
      60_000,
      said,
    );
    await until(
      'HoldfastSuspectsNotAsked resolved',
      async () => ((await suspectAlerts()).length === 0 ? true : undefined),
      60_000,
      seen,
    );
    const resolvedAfterS = (Date.now() - upAt) / 1000;
    expect((await prometheus.query('max(holdfast_suspect_consumers)'))[0]?.value).toBe(0);
    expect((await prometheus.ruleHealth()).filter((r) => r.health !== 'ok')).toEqual([]);
    console.log(
      `[alerts] suspects: HoldfastSuspectsNotAsked fired ${firedAfterS.toFixed(1)} s after the event; resolved ${resolvedAfterS.toFixed(1)} s after the node answered again`,
    );
  }, 300_000);
});
