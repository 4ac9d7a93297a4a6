/**
 * Who still uses the old password: after a rotation, the connections of its login established
 * before it (Redis `CLIENT LIST`, PostgreSQL `pg_stat_activity`), and a rotation's overlap cut over
 * on that evidence (redis-acl with `rotationOverlap`): kept while a client from before the rotation
 * is connected, dropped once it leaves, or at `rotationOverlapMax` whatever remains.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresLogin, redisLogin } from '../../backends/logins.js';
import { sharedBackend } from '../../backends/index.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { RotationNotes } from '../../../src/queue/rotation-notes.js';
import { readStatus } from '../../../src/cli/status-command.js';
import { formatStatus } from '../../../src/status/format-status.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';

/** Clients the tests open as a consumer's app would, closed after each test. */
const apps: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of apps.splice(0)) await close().catch(() => undefined);
});

/** A Redis client logged in as `c` with `password`, connected until the test closes it. */
async function redisApp(c: Consumer, password: string): Promise<Redis> {
  const { host, port } = sharedBackend('redis');
  const app = new Redis({
    host,
    port,
    username: c.login,
    password,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  app.on('error', () => undefined);
  apps.push(() => Promise.resolve(app.disconnect()));
  await app.ping();
  return app;
}

/** Waits until Redis counts the app's connection two seconds old (`CLIENT LIST` tells its age in whole seconds). */
async function agedOneSecond(f: EngineFixture, app: Redis): Promise<void> {
  const id = Number(await app.client('ID'));
  const { host, port, admin } = sharedBackend('redis');
  const adminClient = new Redis({ host, port, username: admin.username, password: admin.password });
  try {
    await f.until('the app connection two seconds old', async () => {
      const list = String(await adminClient.call('CLIENT', 'LIST', 'ID', String(id)));
      return Number(/ age=(\d+)/.exec(list)?.[1] ?? 0) >= 2;
    });
  } finally {
    adminClient.disconnect();
  }
}

function rotate(c: Consumer): string {
  const next = randomBytes(18).toString('base64url');
  writeFileSync(c.secretPath, `${next}\n`);
  return next;
}

function notesOf(f: EngineFixture): RotationNotes {
  const { host, port, admin } = sharedBackend('redis');
  const redis = new Redis({ host, port, username: admin.username, password: admin.password });
  apps.push(() => Promise.resolve(redis.disconnect()));
  return new RotationNotes(redis, holdfastPrefix(f.config.queue.prefix));
}

/** `holdfast status` as a person reads it, and its provider's old connections as `/status` gives them. */
async function statusOf(f: EngineFixture) {
  const report = await readStatus(f.config, {});
  return { text: formatStatus(report), listed: report.providers.find((p) => p.provider === 'cache')?.oldConnections };
}

const moves = (f: EngineFixture, c: Consumer) =>
  f
    .logsFor(c)
    .filter((l) => l.msg.includes(' → '))
    .map((l) => l.msg);

describe('old connections and the cutover (redis-acl)', () => {
  const fixture = engineFixtures();
  const login = (c: Consumer, password: string) =>
    redisLogin(sharedBackend('redis'), c.login, password).catch(() => false);

  it('keeps the overlap while a client from before the rotation is connected, and cuts over once it leaves', async () => {
    const f = await fixture({
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      providerLines: ['rotationOverlap: 5s', 'rotationOverlapMax: 10m'],
    });
    await f.startHeld();
    const [c, other] = f.consumers as [Consumer, Consumer];
    const app = await redisApp(c, c.password);
    await redisApp(other, other.password); // another login's client: never counted as c's
    await agedOneSecond(f, app);
    const old = c.password;
    const next = rotate(c);
    await f.until('the new password works', () => login(c, next));
    await redisApp(c, next); // a client of the new password: connected after the rotation, never counted
    const kept = 'rotation overlap kept past rotationOverlap (5s): 1 connection from before the rotation at';
    await f.until('the overlap kept for the old client', () => f.logsFor(c).some((l) => l.msg.includes(kept)));
    // the decision is made by the checks: a few more of them, and the old password is still accepted
    const notes = notesOf(f);
    const listed = await notes.oldConnectionsOf('cache', c.key);
    expect(listed?.count).toBe(1);
    expect(listed?.addresses).toHaveLength(1);
    await f.until(
      'two more listings',
      async () => ((await notes.oldConnectionsOf('cache', c.key))?.listedAt ?? 0) > (listed?.listedAt ?? 0) + 1900,
    );
    expect(await login(c, old)).toBe(true);
    expect(moves(f, c).filter((m) => m.includes('removing'))).toEqual([]);

    await app.quit();
    await f.until('the old password refused once the old client left', async () => !(await login(c, old)));
    expect(await login(c, next)).toBe(true);
    expect(
      moves(f, c).some((m) =>
        m.startsWith('held → applying: rotation overlap ended on evidence: no connection from before the rotation at'),
      ),
    ).toBe(true);
    expect((await notes.oldConnectionsOf('cache', c.key))?.count ?? 0).toBe(0);

    // after the cutover, a client still holding the old password is said at once as the likely stale one (a moment
    // after it: the failures up to the cutover's apply are the test's own logins above, told from an app's by time)
    await new Promise((r) => setTimeout(r, 1_500));
    await redisApp(c, old).catch(() => undefined);
    const stale = 'since its old password was dropped at';
    await f.until('the stale client named', () => f.logsFor(c).some((l) => l.msg.includes(stale)));
    const said = f.logsFor(c).filter((l) => l.msg.includes(stale));
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe(40);
    expect(said[0]!.msg).toMatch(
      /^cache\/c\d+: \d+ failed logins? from 127\.0\.0\.1 since its old password was dropped at \d\d:\d\d:\d\d UTC \(rotation cut over\): likely a client still using the old password$/,
    );
  });

  it('cuts over at rotationOverlapMax while the old client stays connected, and lists it', async () => {
    const f = await fixture({
      consumers: 1,
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
      providerLines: ['rotationOverlap: 1s', 'rotationOverlapMax: 5s'],
    });
    const engine = await f.startHeld();
    const [c] = f.consumers as [Consumer];
    const app = await redisApp(c, c.password);
    await agedOneSecond(f, app);
    const old = c.password;
    const next = rotate(c);
    await f.until('the new password works', () => login(c, next));
    await f.until('the old password refused at the bound', async () => !(await login(c, old)));
    expect(
      moves(f, c).some((m) => m.includes('rotation overlap ended at rotationOverlapMax (5s after the rotation at')),
    ).toBe(true);
    // the client from before the rotation is still there, still named, the cutover with it
    expect(await app.ping()).toBe('PONG');
    const notes = notesOf(f);
    await f.until(
      'the cutover listed',
      async () => (await notes.oldConnectionsOf('cache', c.key))?.cutAt !== undefined,
    );
    const listed = await notes.oldConnectionsOf('cache', c.key);
    expect(listed).toMatchObject({ count: 1 });
    expect(listed?.cutAt).toBeGreaterThanOrEqual((listed?.at ?? Infinity) + 5000);
    const status = await statusOf(f);
    const address = `127.0.0.1:${app.stream.localPort}`;
    const clock = '\\d\\d:\\d\\d:\\d\\d UTC';
    expect(status.text).toMatch(
      new RegExp(
        `\\n {4}${c.key}: 1 connection from before the rotation at ${clock} \\(${address}\\); the old password dropped at ${clock}\\n`,
      ),
    );
    expect(status.listed).toMatchObject({
      count: 1,
      consumers: [{ consumer: c.key, login: c.login, count: 1, addresses: [address] }],
    });
    // the same on /status and on the consumer's page
    const http = await f.httpServer(engine, undefined, { oldConnections: engine.rotations });
    apps.push(() => http.close());
    const served = (await (await fetch(`${http.url}/status`)).json()) as StatusReport;
    expect(served.providers.find((p) => p.provider === 'cache')?.oldConnections?.consumers[0]).toMatchObject({
      consumer: c.key,
      addresses: [address],
    });
    const page = await (await fetch(`${http.url}/consumer?key=${encodeURIComponent(c.key)}`)).text();
    expect(page).toMatch(
      new RegExp(
        `<th>from before its rotation</th><td>${c.key}: 1 connection from before the rotation at ${clock} \\(${address}\\); the old password dropped at`,
      ),
    );
  });
});

describe('old connections (postgres-roles)', () => {
  const fixture = engineFixtures();

  it('lists the sessions opened before a rotation, with their addresses', async () => {
    const f = await fixture({
      consumers: 2,
      adapterKind: 'postgres-roles',
      timing: { verifyEvery: '1s', checkTimeout: '1s' },
    });
    await f.startHeld();
    const [c, other] = f.consumers as [Consumer, Consumer];
    const { host, port } = sharedBackend('postgres');
    const session = new pg.Client({ host, port, user: c.login, password: c.password, database: 'postgres' });
    session.on('error', () => undefined);
    await session.connect();
    apps.push(() => session.end());
    const { rows } = await session.query<{ port: number }>('SELECT inet_client_port() AS port');
    const next = rotate(c);
    rotate(other); // rotated too, but with no session from before: nothing listed
    await f.until('the new password works', () => postgresLogin({ host, port }, c.login, next).catch(() => false));
    const said = ': 1 connection from before the rotation at';
    await f.until('the old session said', () => f.logsFor(c).some((l) => l.msg.includes(said)));
    const line = f.logsFor(c).find((l) => l.msg.includes(said))!.msg;
    expect(line).toContain(`:${rows[0]!.port})`);
    expect(line).toContain('they logged in with the old password');
    expect(f.logsFor(other).filter((l) => l.msg.includes('from before the rotation'))).toEqual([]);
    const listed = await notesOf(f).oldConnectionsOf('cache', c.key);
    expect(listed).toMatchObject({ login: c.login, count: 1 });
    const status = await statusOf(f);
    expect(status.text).toContain(`    ${c.key}: 1 connection from before the rotation at `);
    expect(status.listed?.consumers.map((o) => o.consumer)).toEqual([c.key]);
  });
});
