/**
 * A loss seen at once (rule 13): the cache restarts empty while every consumer's next check is a minute away. The
 * restart is seen on holdfast's own connections (a new run id), every consumer becomes suspect and is asked now, and
 * the status is red until all are.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { ownBackend } from '../../backends/index.js';
import type { BackendEndpoint } from '../../backends/types.js';
import { engineFixtures, type EngineFixture, type LogLine } from './engine-fixture.js';

const CONSUMERS = 60;

/** How many `ACL SETUSER` the server ran since it started (its command stats start empty with it). */
async function setUsers(provider: BackendEndpoint): Promise<number> {
  const admin = new Redis(provider.url);
  const stats = await admin.info('commandstats');
  admin.disconnect();
  return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** Waits for the first log line since `since` that `matches`, looking every 20 ms. */
async function lineSaid(f: EngineFixture, since: number, matches: (l: LogLine) => boolean): Promise<LogLine> {
  const limit = Date.now() + 20_000;
  for (;;) {
    const line = f.logs.find((l) => (l.time as number) >= since && matches(l));
    if (line) return line;
    if (Date.now() > limit) throw new Error('the restart was not said within 20 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a cache restarted empty, seen on holdfast’s own connections', () => {
  const fixture = engineFixtures();

  it('makes every consumer suspect and asks it now, not at its next interval a minute away; red until all are asked', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: CONSUMERS, timing: { verifyEvery: '60s', checkTimeout: '1s' } });
    await f.startHeld();
    await f.until('status healthy', async () => (await f.status()).healthy);
    const node = new URL(provider.url).host;

    // taken before: the engine may see the new run before restart() returns
    const restarted = Date.now();
    await provider.restart({ keepData: false });
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);

    const said = await lineSaid(f, restarted, (l) => l.msg.startsWith(`cache ${node} restarted (new run id): asking`));
    expect(said.msg).toBe(`cache ${node} restarted (new run id): asking its ${CONSUMERS} consumers now`);
    // read at once, as an operator paged by the restart would: red, saying why
    const red = await f.status();
    expect(red.healthy).toBe(false);
    const line = red.providers.find((p) => p.provider === 'cache')!.problems.find((p) => p.includes(node));
    expect(line).toMatch(
      new RegExp(
        `^node ${node} restarted at \\d\\d:\\d\\d:\\d\\d \\(new run id\\): \\d+ of ${CONSUMERS} consumers not asked since$`,
      ),
    );

    // every interval is a minute; back long before the first of them falls due
    const backMs = await f.until(
      'every consumer to authenticate again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      30_000,
    );
    console.log(`[suspect] ${CONSUMERS} consumers authenticate again ${backMs} ms after the restart was said`);
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
    const drained = await lineSaid(f, restarted, (l) => l.msg.startsWith(`cache ${node} restarted (new run id): all`));
    expect(drained.msg).toMatch(/: all its consumers asked again, [\d.]+ s after it was seen$/);

    // each healed once: one login written per consumer for the one restart, and the log says why for each
    expect(await setUsers(provider)).toBe(CONSUMERS);
    for (const c of f.consumers) {
      const heals = f
        .logsFor(c)
        .filter((l) => (l.time as number) >= restarted && l.msg.startsWith('not held (missing'));
      expect(heals).toHaveLength(1);
    }
    expect(f.logs.filter((l) => (l.time as number) >= restarted && l.level >= 50).map((l) => l.msg)).toEqual([]);
  });
});

describe("the suspects in the queue's Redis", () => {
  /** How many times the server ran `command` (inside scripts too) since its counts were reset. */
  async function calls(admin: Redis, command: string): Promise<number> {
    const stats = await admin.info('commandstats');
    return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  }

  it('are made in one SADD, cleared as each is asked in one SREM per batch, and a second event asks only those asked since', async () => {
    const server = await ownBackend('redis');
    const [redis, admin] = [new Redis(server.url), new Redis(server.url)];
    const prefix = holdfastPrefix(`{suspects-${randomBytes(4).toString('hex')}}`);
    const coordination = createCoordination(redis, prefix, new NoteSeal(randomBytes(32)));
    const keys = Array.from({ length: 100 }, (_, i) => `cache/c${String(i).padStart(3, '0')}`);
    // the provider's consumers asked about, as their checks' releases note them
    await admin.zadd(coordinationKeys(prefix).checked('cache'), ...keys.flatMap((k, i) => [i, k]));
    const event = { node: '127.0.0.1:6379', why: 'new-run-id' as const, at: new Date().toISOString() };

    await admin.config('RESETSTAT');
    expect((await coordination.signals.markSuspects('cache', event)).sort()).toEqual(keys);
    expect(await calls(admin, 'sadd')).toBe(1);
    expect((await coordination.signals.suspects(['cache'])).get('cache')).toEqual({
      count: 100,
      event: { ...event, of: 100 },
    });

    // 40 asked (their checks released in one turn), 10 could not ask: those stay suspect
    await admin.config('RESETSTAT');
    await Promise.all([
      ...keys.slice(0, 40).map((k) => coordination.locks.release(k, 'cache', 't', undefined, 'asked')),
      ...keys.slice(40, 50).map((k) => coordination.locks.release(k, 'cache', 't', undefined, 'could-not-ask')),
    ]);
    expect(await calls(admin, 'srem')).toBeLessThanOrEqual(2);
    expect((await coordination.signals.suspects(['cache'])).get('cache')?.count).toBe(60);

    // the node flaps: only the 40 asked since are asked again, the 60 whose asking is under way are not
    const again = await coordination.signals.markSuspects('cache', { ...event, at: new Date().toISOString() });
    expect(again.sort()).toEqual(keys.slice(0, 40));
    expect((await coordination.signals.suspects(['cache'])).get('cache')?.count).toBe(100);
    redis.disconnect();
    admin.disconnect();
  });
});
