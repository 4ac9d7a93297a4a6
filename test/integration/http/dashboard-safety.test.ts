/**
 * The dashboard is safe where it is put, on a running engine and real servers: off loopback it
 * needs a password (`holdfast run --http 0.0.0.0:…` without one exits 2 saying what to set); a
 * request naming a Host it does not answer to gets 421 (DNS rebinding); every response carries
 * the security headers; basic auth wants the right username and the right password; Bull
 * Board never adds a job or rewrites one's data, even with `readOnly: false` (every write it refuses:
 * `dashboard-writes.test.ts`), and does not show the queue Redis's INFO.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../../src/http/http-server.js';
import { createLogger } from '../../../src/logging/logger.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { sharedBackend } from '../../backends/index.js';
import { freePort } from '../../backends/ports.js';
import { engineFixtures } from '../engine/engine-fixture.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';

const AUTH = { username: 'holdfast', password: 'board-Pw-7c1-long' };
const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const RIGHT = basic(AUTH.username, AUTH.password);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (fetch would not let a test choose the Host). */
function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

function expectSecurityHeaders(answer: Answer, what: string): void {
  const csp = answer.headers['content-security-policy'] ?? '(no Content-Security-Policy)';
  expect(csp, `${what}: Content-Security-Policy`).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
  expect(csp, what).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(answer.headers['x-frame-options'], what).toBe('DENY');
  expect(answer.headers['x-content-type-options'], what).toBe('nosniff');
  expect(answer.headers['referrer-policy'], what).toBe('no-referrer');
}

describe('the dashboard where it is put', () => {
  const fixture = engineFixtures();
  const children: ChildProcess[] = [];
  let server: HttpServer | undefined;
  afterAll(async () => {
    await server?.close();
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('off loopback without a password: holdfast run exits 2 naming what to set, before anything starts; with one it serves', async () => {
    const f = await fixture({ consumers: 1 });
    const config = join(f.dir, 'holdfast.yaml');
    const port = await freePort();

    const refused = spawnHoldfast(['run', '-c', config, '--http', `0.0.0.0:${port}`]);
    children.push(refused);
    expect(await exitOf(refused)).toBe(2);
    expect(refused.output()).toContain(
      `holdfast: the dashboard would listen on 0.0.0.0:${port}, which is not a loopback address, with no password: set http.passwordFile`,
    );
    expect(refused.output()).toContain('[CONFIG_INVALID]');
    expect(refused.output()).not.toContain('holdfast running'); // the engine never started

    // the same from the configuration file's http.listen
    const fromFile = join(f.dir, 'listen-anywhere.yaml');
    writeFileSync(fromFile, `${readFileSync(config, 'utf8')}\nhttp: { listen: "0.0.0.0:${port}" }\n`);
    const refusedToo = spawnHoldfast(['run', '-c', fromFile]);
    children.push(refusedToo);
    expect(await exitOf(refusedToo)).toBe(2);
    expect(refusedToo.output()).toContain('set http.passwordFile');

    // with a password file it starts there, and answers (on loopback) to the right pair only
    writeFileSync(join(f.dir, 'secrets/dashboard'), `${AUTH.password}\n`, { mode: 0o600 });
    appendFileSync(config, '\nhttp: { passwordFile: secrets/dashboard }\n');
    const run = spawnHoldfast(['run', '-c', config, '--http', `0.0.0.0:${port}`]);
    children.push(run);
    const url = `http://127.0.0.1:${port}`;
    await f
      .until(
        'the dashboard answers',
        async () =>
          (await send(`${url}/healthz`, { headers: { authorization: RIGHT } }).catch(() => undefined))?.status === 200,
        60_000,
      )
      .catch((error: Error) => {
        throw new Error(`${error.message}\n${run.output()}`);
      });
    expect((await send(`${url}/healthz`)).status).toBe(401);
    run.kill('SIGTERM');
    expect(await exitOf(run)).toBe(0);
  }, 120_000);

  it('answers only to its own Host names, with the security headers on every response, behind basic auth of both fields, and never writes job data', async () => {
    // verifyEvery stays 60 s: the wait jobs looked at below are still there when looked at again
    const f = await fixture({ consumers: 2 });
    const engine = await f.startHeld();
    await f.delayedWaitJob(f.consumers[0]!.key); // routine waits are in the due set: a job handed to the queue, for the board to list
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      auth: AUTH,
      hosts: ['holdfast.example.test'],
      readOnly: false,
      store: engine.store,
      coordination: engine.coordination,
      queue: engine.queue,
      providers: f.config.providers,
      logger: createLogger({ level: 'fatal', format: 'json', scrubber: new Scrubber() }),
    });
    const { url } = server;
    const port = new URL(url).port;
    const get = (path: string, headers: Record<string, string> = {}) =>
      send(`${url}${path}`, { headers: { authorization: RIGHT, ...headers } });

    // Host: the listen address, the loopback names with the port, and http.hosts; nothing else
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      'holdfast.example.test',
      `holdfast.example.test:${port}`,
    ]) {
      expect((await get('/healthz', { host })).status, host).toBe(200);
    }
    for (const host of [
      `attacker.example:${port}`,
      'attacker.example',
      `127.0.0.1:${Number(port) + 1}`,
      `localhost.attacker.example:${port}`,
    ]) {
      const answer = await get('/healthz', { host });
      expect(answer.status, host).toBe(421);
      expectSecurityHeaders(answer, `421 for ${host}`);
    }
    expect((await send(`${url}/status`, { headers: { host: `attacker.example:${port}` } })).status).toBe(421); // before auth too

    // the headers on the pages, Bull Board, its files and API, JSON, and every refusal
    const key = encodeURIComponent(f.consumers[0]!.key);
    const page = await get('/');
    expect(page.body).toContain('Every consumer served');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'sha256-[^']+'/);
    const board = await get('/queues');
    expect(board.status).toBe(200);
    expect(board.body).not.toContain('fonts.googleapis.com');
    const script = /<script defer src="(static\/js\/main[^"]+)"/.exec(board.body)?.[1];
    expect(script).toBeDefined();
    const answers: Array<[string, Answer]> = [
      ['/', page],
      ['/consumer', await get(`/consumer?key=${key}`)],
      ['/queues', board],
      ['/queues/ script', await get(`/queues/${script!}`)],
      ['/queues/api/queues', await get('/queues/api/queues')],
      ['/status', await get('/status')],
      ['/healthz', await get('/healthz')],
      ['/metrics (none here: 404)', await get('/metrics')],
      ['404', await get('/nothing-here')],
      ['401', await send(`${url}/`)],
      [
        '403',
        await send(`${url}/queues/api/queues/consumers/add`, {
          method: 'POST',
          headers: { authorization: RIGHT, 'content-type': 'application/json' },
          body: '{}',
        }),
      ],
    ];
    for (const [what, answer] of answers) {
      expect(answer.status, what).not.toBe(421);
      expectSecurityHeaders(answer, what);
    }
    expect(answers.find(([w]) => w === '/status')![1].status).toBe(200);
    expect(answers.find(([w]) => w === '/consumer')![1].status).toBe(200);

    // basic auth: the right pair only; a wrong username of the right length, or a wrong password, is refused
    expect(AUTH.username).toHaveLength('holdfasx'.length);
    expect((await send(`${url}/status`, { headers: { authorization: basic('holdfasx', AUTH.password) } })).status).toBe(
      401,
    );
    expect(
      (
        await send(`${url}/status`, {
          headers: { authorization: basic(AUTH.username, `${AUTH.password.slice(0, -1)}x`) },
        })
      ).status,
    ).toBe(401);
    expect(
      (await send(`${url}/status`, { headers: { authorization: basic(AUTH.username, AUTH.password.slice(0, -1)) } }))
        .status,
    ).toBe(401);
    expect((await send(`${url}/status`, { headers: { authorization: RIGHT } })).status).toBe(200);

    // Bull Board with readOnly false: no add (nor Duplicate, the UI's retry with new data), no update-data
    const jobsOf = async () =>
      (
        JSON.parse(
          (await get(`/queues/api/queues?activeQueue=consumers&status=delayed&page=1&jobsPerPage=50`)).body,
        ) as { queues: Array<{ name: string; jobs: Array<{ id: string; name: string; data: unknown }> }> }
      ).queues.find((q) => q.name === 'consumers')!.jobs;
    const before = await jobsOf();
    const job = before.find((j) => j.name.endsWith('wait verify'))!;
    expect(job).toBeDefined();
    const json = { authorization: RIGHT, 'content-type': 'application/json' };
    const widened = { kind: 'desired', desired: { login: 'default', values: { commands: ['+@all'] } } };
    const add = await send(`${url}/queues/api/queues/consumers/add`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'cache/c0000 desired', data: widened, options: {} }),
    });
    expect(add.status).toBe(403);
    expect(JSON.parse(add.body)).toMatchObject({ error: { code: 'DASHBOARD_ACTION_REFUSED' } });
    const update = await send(`${url}/queues/api/queues/consumers/${encodeURIComponent(job.id)}/update-data`, {
      method: 'PATCH',
      headers: json,
      body: JSON.stringify({ jobData: widened }),
    });
    expect(update.status).toBe(403);
    expect(JSON.parse(update.body)).toMatchObject({ error: { code: 'DASHBOARD_ACTION_REFUSED' } });
    const again = await get(`/queues/api/queues/consumers/${encodeURIComponent(job.id)}`);
    expect(again.status).toBe(200);
    expect(JSON.stringify((JSON.parse(again.body) as { job: { data: unknown } }).job.data)).toBe(
      JSON.stringify(job.data),
    );
    const redis = new Redis(sharedBackend('redis').url);
    const jobData: string[] = [];
    for (const k of await redis.keys(`${f.config.queue.prefix}:${f.config.queue.name}:*`))
      if ((await redis.type(k)) === 'hash') jobData.push((await redis.hget(k, 'data')) ?? '');
    expect(jobData.length).toBeGreaterThanOrEqual(2);
    expect(jobData.join('\n')).not.toContain('+@all');
    // an action that writes no job data still works when readOnly is false
    expect(
      (
        await send(`${url}/queues/api/queues/consumers/${encodeURIComponent(job.id)}/promote`, {
          method: 'PUT',
          headers: { authorization: RIGHT },
        })
      ).status,
    ).toBe(204);

    // the queue Redis's INFO is not shown
    const info = await redis.info('server');
    redis.disconnect();
    const version = /redis_version:(\S+)/.exec(info)![1]!;
    const stats = await get('/queues/api/redis/stats');
    expect(stats.status).toBe(403);
    expect(stats.body).not.toContain(version);
    expect(stats.body).not.toMatch(/"memory"|"uptime"|"os"/);
  }, 120_000);
});
