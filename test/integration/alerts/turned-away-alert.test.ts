/**
 * A consumer turned away, end to end: a running `holdfast run --http` on a real Redis, scraped by a
 * real Prometheus with the shipped rules. An app that logs in with a wrong password is shown in
 * `/status` and on the dashboard with its address, counted by `holdfast_failed_logins_total`,
 * and fires `HoldfastConsumerTurnedAway` for its provider, while its login stays held and the
 * status green; another login's failures are counted to the provider only.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { startScrapedHoldfast, type ScrapedHoldfast } from '../../support/scraped-holdfast.js';
import { EngineFixture, type Consumer } from '../engine/engine-fixture.js';
import { until } from '../../support/until.js';

interface StatusJson {
  healthy: boolean;
  consumers: Array<{ consumer: string; state: string }>;
  providers: Array<{
    provider: string;
    failedLogins: { consumers: Array<{ consumer: string; failedLogins: number; addresses: string[] }> } | null;
  }>;
}

describe('a consumer turned away, end to end', () => {
  let fixture: EngineFixture | undefined;
  let scene: ScrapedHoldfast | undefined;
  afterAll(async () => {
    scene?.kill();
    await fixture?.stop();
  });

  it('an app with a wrong password: shown with its address, counted and alerted, its login held and the status green', async () => {
    const backend = await ownBackend('redis');
    fixture = await EngineFixture.create({
      provider: backend,
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
    });
    const f = fixture;
    const [app] = f.consumers as [Consumer, Consumer];
    scene = await startScrapedHoldfast(f, 2);
    const { hf, prometheus, said, seen } = scene;
    const status = () => scene!.status<StatusJson>();
    await until(
      'its failed logins counted at 0',
      async () =>
        (await prometheus.query('holdfast_failed_logins_total{to="consumer"}'))[0]?.value === 0 ? true : undefined,
      30_000,
      seen,
    );

    const client = new Redis({ host: backend.host, port: backend.port, lazyConnect: true, enableReadyCheck: false });
    client.on('error', () => undefined);
    afterAll(() => client.disconnect());
    await client.connect();
    for (let i = 0; i < 3; i++) await expect(client.call('AUTH', app.login, 'its-old-password')).rejects.toThrow();
    await expect(client.call('AUTH', `t${f.tag}_nobody`, 'x')).rejects.toThrow();

    const shown = await until(
      'shown in /status',
      async () =>
        (await status()).providers[0]?.failedLogins?.consumers.find(
          (c) => c.consumer === app.key && c.failedLogins === 3,
        ),
      20_000,
      said,
    );
    expect(shown.addresses).toEqual(['127.0.0.1']);
    const now = await status();
    expect(now.healthy).toBe(true);
    expect(now.consumers.find((c) => c.consumer === app.key)?.state).toBe('held');
    const page = await (await fetch(`${hf}/`)).text();
    expect(page).toContain('id="turned-away"');
    expect(page).toContain(`${app.key}</a>: 3 failed logins from 127.0.0.1 in the last 5m (wrong password)`);

    const firing = await until(
      'HoldfastConsumerTurnedAway firing',
      async () =>
        (await prometheus.alerts()).find(
          (a) => a.labels.alertname === 'HoldfastConsumerTurnedAway' && a.state === 'firing',
        ),
      30_000,
      seen,
    );
    expect(firing.labels).toMatchObject({ severity: 'warning', provider: 'cache' });
    expect((await prometheus.query('holdfast_failed_logins_total{to="consumer"}'))[0]?.value).toBe(3);
    expect((await prometheus.query('holdfast_failed_logins_total{to="provider"}'))[0]?.value).toBeGreaterThanOrEqual(1);
    await prometheus.stop();
  });
});
