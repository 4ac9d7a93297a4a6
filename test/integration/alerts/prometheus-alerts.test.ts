/**
 * The shipped alert rules (deploy/prometheus/holdfast-rules.yml, as shipped) in a real
 * Prometheus that scrapes a running `holdfast run --http` every second: a login deleted by hand
 * on a backend whose admin has lost the right to re-create it makes HoldfastConsumerNotServed
 * fire, naming provider and consumer; once the backend accepts again it is healed and the
 * alert resolves. How long each takes is printed.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { startScrapedHoldfast, type ScrapedHoldfast } from '../../support/scraped-holdfast.js';
import { EngineFixture, type Consumer } from '../engine/engine-fixture.js';
import { until } from '../../support/until.js';

describe('alerts in a real Prometheus', () => {
  let fixture: EngineFixture | undefined;
  let scene: ScrapedHoldfast | undefined;
  afterAll(async () => {
    scene?.kill();
    await fixture?.stop();
  });

  it('a login deleted by hand that the backend will not let holdfast re-create fires HoldfastConsumerNotServed, which resolves once it accepts again', async () => {
    const backend = await ownBackend('redis');
    const root = new Redis({
      host: backend.host,
      port: backend.port,
      username: backend.admin.username,
      password: backend.admin.password,
    });
    root.on('error', () => undefined);
    afterAll(() => root.disconnect());
    // holdfast's admin on this Redis: a login of its own, whose rights an operator can narrow
    const admin = { username: 'hf_admin', password: randomBytes(18).toString('base64url') };
    await root.call('ACL', 'SETUSER', admin.username, 'on', `>${admin.password}`, '~*', '&*', '+@all');
    fixture = await EngineFixture.create({
      provider: { ...backend, admin },
      consumers: 3,
      timing: { verifyEvery: '1s', checkTimeout: '500ms', retryBase: '200ms', jitter: 0 },
    });
    const f = fixture;
    const [victim, ...others] = f.consumers as [Consumer, ...Consumer[]];
    scene = await startScrapedHoldfast(f, 3);
    const { hf, prometheus, said, seen } = scene;
    await until(
      'holdfast scraped, its consumers held',
      async () => {
        const held = await prometheus.query('holdfast_consumers{state="held"}');
        return held[0]?.value === 3 ? true : undefined;
      },
      30_000,
      seen,
    );
    const notServed = () => scene!.alertsNamed('HoldfastConsumerNotServed');
    expect(await notServed()).toEqual([]);

    // the admin loses the right to create logins, and someone deletes one by hand
    await root.call('ACL', 'SETUSER', admin.username, '-acl|setuser');
    await root.call('ACL', 'DELUSER', victim.login);
    const deletedAt = Date.now();
    const firing = await until(
      'HoldfastConsumerNotServed firing',
      async () => {
        const alert = (await notServed()).find((a) => a.state === 'firing');
        return alert;
      },
      30_000,
      seen,
    );
    const firedAfter = Date.now() - deletedAt;
    expect(firing.labels).toMatchObject({
      alertname: 'HoldfastConsumerNotServed',
      severity: 'critical',
      provider: 'cache',
      consumer: victim.key,
      login: victim.login,
    });
    expect(firing.annotations.summary).toContain(`consumer ${victim.key} of provider cache not served for`);
    expect(firing.annotations.description).toMatch(/Its state now: (lost|applying|retrying)\./);
    expect(firing.annotations.runbook).toContain(`holdfast check ${victim.key}`);
    // only the consumer deleted is named; the others are still served
    expect((await notServed()).map((a) => a.labels.consumer)).toEqual([victim.key]);
    expect(await f.canLogin(victim)).toBe(false);
    for (const c of others) expect(await f.canLogin(c)).toBe(true);
    // what Prometheus read: the consumer named on /metrics, unserved since about when it was deleted (within its
    // detection)
    const scraped = (await (await fetch(`${hf}/metrics`)).text()).split('\n');
    const line = scraped.find((l) =>
      l.startsWith(
        `holdfast_consumer_unserved_since_timestamp_seconds{provider="cache",consumer="${victim.key}",login="${victim.login}",`,
      ),
    );
    expect(line, scraped.filter((l) => l.startsWith('holdfast_consumer')).join('\n')).toBeDefined();
    const since = Number(line!.split(' ').pop()) * 1000;
    expect(since).toBeGreaterThanOrEqual(deletedAt - 1000);
    expect(since).toBeLessThan(deletedAt + firedAfter);
    const statusLine = await (await fetch(`${hf}/healthz`)).text();
    expect(statusLine).toContain(victim.key);

    // the backend accepts again: holdfast re-creates the login by itself, and the alert resolves
    await root.call('ACL', 'SETUSER', admin.username, '+acl|setuser');
    const acceptedAt = Date.now();
    await until('the login re-created', async () => ((await f.canLogin(victim)) ? true : undefined), 30_000, said);
    const healedAfter = Date.now() - acceptedAt;
    await until(
      'HoldfastConsumerNotServed resolved',
      async () => ((await notServed()).length === 0 ? true : undefined),
      60_000,
      seen,
    );
    const resolvedAfter = Date.now() - acceptedAt;
    // nothing else fired meanwhile: the rules are not noisy over one refused re-apply
    const stillActive = (await prometheus.alerts()).map((a) => a.labels.alertname);
    expect(stillActive).toEqual([]);
    expect((await prometheus.ruleHealth()).filter((r) => r.health !== 'ok')).toEqual([]);
    console.log(
      `[alerts] ${prometheus.flavor}, scrape and evaluation every 1 s, verifyEvery 1 s: HoldfastConsumerNotServed fired ${(firedAfter / 1000).toFixed(1)} s after the login was deleted; ` +
        `once the backend accepted again the login was back in ${(healedAfter / 1000).toFixed(1)} s and the alert resolved in ${(resolvedAfter / 1000).toFixed(1)} s`,
    );
  }, 180_000);
});
