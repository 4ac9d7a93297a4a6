/**
 * A consumer turned away, end to end: a running `holdfast run --http` on a real Redis, scraped by a
 * real Prometheus with the shipped rules. An app that logs in with a wrong password is shown in
 * `/status` and on the dashboard with its address, counted by `holdfast_failed_logins_total`,
 * and fires `HoldfastConsumerTurnedAway` for its provider, while its login stays held and the
 * status green; another login's failures are counted to the provider only.
 */
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { freePort } from '../../backends/ports.js';
import { LocalPrometheus } from '../../backends/prometheus.js';
import { spawnHoldfast, type HoldfastProcess } from '../../support/holdfast-cli.js';
import { EngineFixture, type Consumer } from '../engine/engine-fixture.js';
import { until } from '../../support/until.js';

const RULES = resolve(import.meta.dirname, '../../../deploy/prometheus/holdfast-rules.yml');

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
  let holdfast: HoldfastProcess | undefined;
  afterAll(async () => {
    holdfast?.kill('SIGKILL');
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
    const port = await freePort();
    holdfast = spawnHoldfast(['run', '-c', `${f.dir}/holdfast.yaml`, '--http', String(port)]);
    const hf = `http://127.0.0.1:${port}`;
    const said = () => Promise.resolve(`holdfast said: ${holdfast!.output().split('\n').slice(-8).join('\n')}`);
    const status = async () => (await (await fetch(`${hf}/status?all=1`)).json()) as StatusJson;
    await until(
      'every consumer held',
      async () => {
        const s = await status().catch(() => undefined);
        return s && s.consumers.length === 2 && s.consumers.every((c) => c.state === 'held') ? true : undefined;
      },
      60_000,
      said,
    );
    const prometheus = await LocalPrometheus.start({
      targets: [`127.0.0.1:${port}`],
      ruleFiles: [RULES],
      everySeconds: 1,
    });
    const seen = async () =>
      `alerts: ${JSON.stringify(await prometheus.alerts().catch(() => []))}; prometheus said: ${prometheus.logTail()}`;
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
