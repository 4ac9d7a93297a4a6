/**
 * The HTTP server on a running engine: /healthz turns 503 within one interval of a consumer
 * becoming unserved and 200 again when it heals; /status, /metrics, the status page, a
 * consumer's page and Bull Board's API answer, read-only, behind basic auth, and without a secret.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../../src/http/http-server.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from '../engine/engine-fixture.js';

const AUTH = { username: 'holdfast', password: 'board-Pw-7c1' };
const authorization = `Basic ${Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64')}`;

describe('the HTTP server', () => {
  const fixture = engineFixtures();
  let server: HttpServer | undefined;
  afterAll(async () => server?.close());

  it('serves /healthz, /status, /metrics, the pages and Bull Board, and /healthz follows a consumer lost and healed', async () => {
    const f = await fixture({ consumers: 3, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    server = await f.httpServer(engine, metrics, { auth: AUTH });
    const get = (path: string, init: RequestInit = {}) =>
      fetch(`${server!.url}${path}`, { ...init, headers: { authorization, ...(init.headers ?? {}) } });
    const seen: string[] = [];
    const text = async (path: string) => {
      const body = await (await get(path)).text();
      seen.push(body);
      return body;
    };

    expect((await fetch(`${server.url}/healthz`)).status).toBe(401);
    expect(
      (
        await get('/healthz', {
          headers: { authorization: `Basic ${Buffer.from('holdfast:wrong').toString('base64')}` },
        })
      ).status,
    ).toBe(401);
    expect((await get('/queues/api/queues', { method: 'PUT' })).status).toBe(405);

    const healthy = await get('/healthz');
    expect(healthy.status).toBe(200);
    const status = (await (await get('/status')).json()) as {
      healthy: boolean;
      total: number;
      providers: Array<{ states: Record<string, number> }>;
    };
    expect(status).toMatchObject({ healthy: true, total: 3, providers: [{ states: { held: 3 } }] });

    // a consumer's login deleted by hand is applied again at its next check (within one job): the heal is counted
    const healed = f.consumers[0]!;
    const admin = new Redis(sharedBackend('redis').url);
    await admin.call('ACL', 'DELUSER', healed.login);
    await f.until('metrics count the heal', async () =>
      /holdfast_heal_seconds_count\{provider="cache"\} [1-9]/.test(await text('/metrics')),
    );
    expect(await f.canLogin(healed)).toBe(true);

    // a consumer that stays unserved (its login deleted, its grant secret gone): 503 within one interval (1 s; bound
    // generous), then 200 once healed
    const victim = f.consumers[1]!;
    rmSync(victim.secretPath);
    await admin.call('ACL', 'DELUSER', victim.login);
    admin.disconnect();
    const lostAt = Date.now();
    let body = '';
    await f.until(
      '/healthz 503',
      async () => {
        const r = await get('/healthz');
        body = await r.text();
        return r.status === 503;
      },
      15_000,
    );
    console.log(`[http] /healthz 503 ${Date.now() - lostAt} ms after the login was deleted (verifyEvery 1 s)`);
    expect(body).toContain(`${victim.key}: `);
    const unservedPage = await text('/');
    expect(unservedPage).toMatch(new RegExp(`<tr class="bad" data-consumer="${victim.key}"`));
    expect(unservedPage.indexOf(victim.key)).toBeLessThan(unservedPage.indexOf(f.consumers[2]!.key));
    writeFileSync(victim.secretPath, `${victim.password}\n`, { mode: 0o600 });
    await f.until('/healthz 200 again', async () => (await get('/healthz')).status === 200, 15_000);
    expect(await f.canLogin(victim)).toBe(true);

    const page = await text('/');
    for (const c of f.consumers) expect(page).toContain(c.key);
    expect(page).toContain('<meta http-equiv="refresh"');
    const filtered = await text(`/?provider=cache&state=held`);
    expect(filtered).toContain(`data-consumer="${victim.key}"`);
    const detail = await text(`/consumer?key=${encodeURIComponent(victim.key)}`);
    expect(detail).toMatch(/→ waitingForSecret|→ lost|→ applying/);
    expect(detail).toContain('Recent transitions');

    const scraped = await text('/metrics');
    expect(scraped).toContain('holdfast_consumers{provider="cache",state="held"} 3');
    expect(scraped).toMatch(/holdfast_checks_total\{provider="cache",kind="(light|deep)",outcome="held"\} \d+/);
    expect(scraped).toMatch(/holdfast_checks_total\{provider="cache",kind="(light|deep)",outcome="not-held"\} [1-9]/);
    expect(scraped).toMatch(/holdfast_applies_total\{provider="cache",kind="reapply",outcome="applied"\} [1-9]/);
    expect(scraped).toMatch(/holdfast_queue_jobs\{state="delayed"\} \d+/);
    expect(scraped).toContain('holdfast_due_waits{state="scheduled"} 3');
    expect(scraped).toMatch(/holdfast_check_lateness_seconds_count\{provider="cache"\} [1-9]/);

    await f.delayedWaitJob(f.consumers[0]!.key); // routine waits are in the due set: a job handed to the queue, for the board to list
    const queues = JSON.parse(
      await text(`/queues/api/queues?activeQueue=consumers&status=delayed&page=1&jobsPerPage=50`),
    ) as { queues: Array<{ name: string; jobs: Array<{ name: string; data: unknown }> }> };
    const queue = queues.queues.find((q) => q.name === 'consumers');
    expect(queue).toBeDefined();
    expect(queue!.jobs.map((j) => j.name)).toEqual(expect.arrayContaining([`${f.consumers[0]!.key} wait verify`]));
    expect(JSON.stringify(queue!.jobs[0]!.data)).toContain('"kind":"wait"');

    // no secret anywhere it served
    const secrets = [
      ...f.consumers.map((c) => c.password),
      sharedBackend('redis').admin.password,
      sharedBackend('mongodb').admin.password,
      AUTH.password,
    ];
    for (const served of seen) for (const secret of secrets) expect(served).not.toContain(secret);
  });
});
