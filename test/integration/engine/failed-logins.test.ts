/**
 * The consumer's side on a real Redis: an app that logs in with a wrong password is seen in the
 * backend's `ACL LOG`, attributed to its consumer with its address and shown (status, log, metric)
 * within an interval while its login stays held; another login's failures are counted to the
 * provider only; a grouped entry read again is not counted again; and an `ACL LOG` grown past its
 * length loses no attribution holdfast had read (and says entries may have been missed).
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { failedLoginsSince } from '../../../src/queue/failed-logins-since.js';
import { formatStatus } from '../../../src/status/format-status.js';
import { readHistory } from '../../../src/history/read-history.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';

/** Logs in as `login` with `password` on one connection, `times` times (each refused), as a misconfigured app does. */
async function failLogins(f: EngineFixture, login: string, times: number): Promise<void> {
  const app = new Redis({
    host: f.provider.host,
    port: f.provider.port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
  });
  app.on('error', () => undefined);
  try {
    await app.connect();
    for (let i = 0; i < times; i++)
      await expect(app.call('AUTH', login, 'an-old-password')).rejects.toThrow(/WRONGPASS/);
  } finally {
    app.disconnect();
  }
}

const cacheOf = (status: StatusReport) => status.providers.find((p) => p.provider === 'cache')!;
const turnedAway = (status: StatusReport, c: Consumer) =>
  cacheOf(status).failedLogins?.consumers.find((t) => t.consumer === c.key);

describe('failed logins, attributed', () => {
  const fixture = engineFixtures();

  it("an app's wrong password is seen, attributed with its address and shown while its login stays held; another login's failures count to the provider only", async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    const [a, b] = f.consumers as [Consumer, Consumer];
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const before = Date.now();
    await failLogins(f, a.login, 3);
    await failLogins(f, `t${f.tag}_nobody`, 2);
    await f.until('its failed logins shown', async () => turnedAway(await f.status(), a)?.failedLogins === 3, 10_000);

    const status = await f.status();
    expect(turnedAway(status, a)).toMatchObject({ failedLogins: 3, addresses: ['127.0.0.1'] });
    expect(turnedAway(status, b)).toBeUndefined();
    expect(cacheOf(status).failedLogins!.unattributed).toBeGreaterThanOrEqual(2);
    // the backend holds what was declared: held, and the status stays green
    expect(status.consumers.find((c) => c.consumer === a.key)?.state).toBe('held');
    expect(status.healthy).toBe(true);
    expect(await f.canLogin(a)).toBe(true);
    expect(formatStatus(status)).toContain(
      `    ${a.key}: 3 failed logins from 127.0.0.1 in the last 5m (wrong password)`,
    );
    const said = f.logs.filter((l) => l.consumer === a.key && l.msg.includes('failed login'));
    expect(said.map((l) => l.msg)).toEqual([
      `${a.key}: 3 failed logins from 127.0.0.1 in the last 5m (wrong password): its login is held, so its app logs in with another password (turned away; repeats are counted)`,
    ]);
    expect(f.logs.some((l) => l.msg.includes('nobody'))).toBe(false);
    const text = await metrics.text();
    expect(text).toContain('holdfast_failed_logins_total{provider="cache",to="consumer"} 3');
    expect(await failedLoginsSince(engine.coordination.notes, a.key, before)).toMatchObject({
      count: 3,
      addresses: ['127.0.0.1'],
      known: true,
    });
    expect((await failedLoginsSince(engine.coordination.notes, b.key, before)).count).toBe(0);
    // its history says it, by the backend, its state held
    const history = await readHistory({ store: engine.store, reads: engine.coordination.notes }, a.key, before);
    expect(history.transitions.filter((t) => t.by === 'backend')).toEqual([
      expect.objectContaining({
        from: 'held',
        to: 'held',
        reason: 'turned away: 3 failed logins from 127.0.0.1 in the last 5m (wrong password)',
      }),
    ]);

    // the grouped entry is read again at every interval: counted once
    await new Promise((r) => setTimeout(r, 3_000));
    expect(turnedAway(await f.status(), a)?.failedLogins).toBe(3);
    // and its growth is counted
    await failLogins(f, a.login, 2);
    await f.until('its growth counted', async () => turnedAway(await f.status(), a)?.failedLogins === 5, 10_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(turnedAway(await f.status(), a)?.failedLogins).toBe(5);
  });

  it('an ACL LOG grown past its length loses no attribution holdfast had read, and says entries may have been missed', async () => {
    const f = await fixture({ consumers: 1, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    const [a] = f.consumers as [Consumer];
    await f.start();
    await f.until('every consumer held', () => f.allHeld());
    await failLogins(f, a.login, 4);
    await f.until('its failed logins shown', async () => turnedAway(await f.status(), a)?.failedLogins === 4, 10_000);
    // three logs' worth of other logins' failures (acllog-max-len is 128): whatever read falls among them, one finds
    // the log full of entries it never read
    const admin = new Redis(f.provider.url);
    const length = Number(((await admin.call('CONFIG', 'GET', 'acllog-max-len')) as string[])[1]);
    admin.disconnect();
    for (let i = 0; i < 3 * length; i += 8)
      await Promise.all(Array.from({ length: 8 }, (_, j) => failLogins(f, `t${f.tag}_flood${i + j}`, 1)));
    // (a read's failures are attributed at the next read, once holdfast's own findings of that moment are noted)
    await f.until('entries said missed, the others counted', async () => {
      const read = cacheOf(await f.status()).failedLogins;
      return (read?.lost.length ?? 0) > 0 && (read?.unattributed ?? 0) >= length;
    });
    const status = await f.status();
    expect(turnedAway(status, a)?.failedLogins).toBe(4);
    expect(cacheOf(status).failedLogins!.unattributed).toBeGreaterThanOrEqual(length);
    expect(formatStatus(status)).toContain('failed logins may have been missed on');
    expect(f.logs.filter((l) => l.msg.includes('ACL LOG was full')).length).toBe(1);
  });

  it("holdfast's own light check refused (a password changed by hand, healed) is not the app's failed login", async () => {
    const f = await fixture({ consumers: 1, timing: { verifyEvery: '1s', checkTimeout: '1s', deepCheckBudget: 0 } });
    const [a] = f.consumers as [Consumer];
    await f.start(); // its checks light (deep only every deepCheckEvery, an hour): AUTH as the consumer
    await f.until('every consumer settled', () => f.settled());
    const admin = new Redis(f.provider.url);
    try {
      const refusedBefore = await authFailures(admin, a.login);
      await admin.call('ACL', 'SETUSER', a.login, 'resetpass', '>changed-by-hand-0123456789');
      // healed: asked as the admin (a login tried here would be a failed login of its own)
      const hash = createHash('sha256').update(a.password).digest('hex');
      await f.until('healed', async () => JSON.stringify(await admin.call('ACL', 'GETUSER', a.login)).includes(hash));
      // its light check was refused and logged by Redis: what is left out here
      expect(await authFailures(admin, a.login)).toBeGreaterThan(refusedBefore);
      await new Promise((r) => setTimeout(r, 2_500));
      expect(turnedAway(await f.status(), a)).toBeUndefined();
      expect(f.logs.some((l) => l.msg.includes('failed login'))).toBe(false);
    } finally {
      admin.disconnect();
    }
  });
});

/** The failed logins `ACL LOG` holds for `login`. */
async function authFailures(admin: Redis, login: string): Promise<number> {
  const log = (await admin.call('ACL', 'LOG', '128')) as unknown[][];
  return log
    .map((e) => new Map(Array.from({ length: e.length / 2 }, (_, i) => [String(e[2 * i]), e[2 * i + 1]])))
    .filter((e) => e.get('reason') === 'auth' && e.get('username') === login)
    .reduce((n, e) => n + Number(e.get('count')), 0);
}
