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
import { ownBackend, ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { SENTINEL_MASTER } from '../../backends/redis-replicas.js';
import type { BackendEndpoint } from '../../backends/types.js';
import { readHistory } from '../../../src/history/read-history.js';
import { engineFixtures, type Consumer, type EngineFixture, type LogLine } from './engine-fixture.js';

const CONSUMERS = 200;

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
    if (Date.now() > limit) throw new Error('the line looked for was not said within 20 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a cache restarted empty, seen on holdfast’s own connections', () => {
  const fixture = engineFixtures();

  it('makes every consumer suspect and asks it now, not at its next interval a minute away; red until all are asked', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: CONSUMERS, timing: { verifyEvery: '60s', checkTimeout: '1s' } });
    const engine = await f.startHeld();
    await f.until('status healthy', async () => (await f.status()).healthy, 60_000);
    const node = new URL(provider.url).host;
    const revs = async () => new Map((await engine.store.list()).map((r) => [r._id, 'rev' in r ? r.rev : -1]));
    const revsBefore = await revs();

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
    // said once all are asked, naming the provider's last event (a loss wave the heals showed may come after it)
    const drained = await lineSaid(f, restarted, (l) => l.msg.startsWith(`cache ${node} `) && l.msg.includes(': all'));
    expect(drained.msg).toMatch(/: all its consumers asked again, [\d.]+ s after it was seen$/);

    // each healed once, on its ticket: one login written per consumer for the one restart, the log says why for each,
    // and no record written (the heal restored what the record says was applied: an event, not a write)
    expect(await setUsers(provider)).toBe(CONSUMERS);
    for (const c of f.consumers) {
      const heals = f.logsFor(c).filter((l) => (l.time as number) >= restarted && / → lost → /.test(l.msg));
      expect(heals.map((l) => [l.reason, l.recorded])).toEqual([['missing: the backend has no such ACL user', false]]);
    }
    expect(await revs()).toEqual(revsBefore);
    // the event in each consumer's history, by node, with no write per consumer
    const history = await readHistory(
      { store: engine.store, reads: engine.coordination.notes, nodeEvents: engine.coordination.signals },
      f.consumers[7]!.key,
      restarted,
    );
    expect(history.transitions.map((t) => [t.by, t.node, t.to])[0]).toEqual(['node', node, 'held']);
    expect(history.transitions[0]!.reason).toMatch(
      /restarted at \d\d:\d\d:\d\d \(new run id\): suspect, asked at once$/,
    );
    expect(f.logs.filter((l) => (l.time as number) >= restarted && l.level >= 50).map((l) => l.msg)).toEqual([]);
  }, 180_000);
});

describe('a PostgreSQL re-initialised empty', () => {
  const fixture = engineFixtures();

  it('makes every role suspect and applies each again at once, at verifyEvery 60s', async () => {
    const provider = await ownBackend('postgres');
    const f = await fixture({
      provider,
      adapterKind: 'postgres-roles',
      consumers: 30,
      timing: { verifyEvery: '60s', checkTimeout: '2s' },
    });
    await f.startHeld();
    const node = `${provider.host}:${provider.port}`;
    const restarted = Date.now();
    await provider.restart({ keepData: false });
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);
    const said = await lineSaid(f, restarted, (l) => l.msg.startsWith(`cache ${node} `) && l.msg.includes(': asking'));
    expect(said.msg).toMatch(
      new RegExp(
        `^cache ${node} (was re-initialised \\(new system id\\)|restarted \\(new run id\\)): asking its 30 consumers now$`,
      ),
    );
    await f.until(
      'every role logs in again',
      async () => (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
      30_000,
    );
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
  }, 180_000);
});

describe('a Sentinel failover, the old master back empty', () => {
  const fixture = engineFixtures();

  it('is healed on the old master long before its next interval (verifyEvery 60s)', async () => {
    const set = await ownRedisReplicas({ replicas: 2, sentinels: 3, downAfterMs: 1_000 });
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      adminLines: [`sentinels: [${set.sentinelUrls.join(', ')}]`, `master: ${SENTINEL_MASTER}`],
      consumers: 12,
      timing: { verifyEvery: '60s', checkTimeout: '3s' },
    });
    await f.startHeld();
    const old = await set.currentMaster();
    const killedAt = Date.now();
    set.kill(old);
    await set.waitForNewMaster(old);
    const restarted = Date.now(); // the old master back empty from here
    await set.restartEmpty(old);
    const on = (c: Consumer) => redisLogin(old, c.login, c.password).catch(() => false);
    const backMs = await f.until(
      'every consumer on the old master, back empty as a replica',
      async () => (await Promise.all(f.consumers.map(on))).every(Boolean),
      30_000,
    );
    // made suspect by the failover's node events (the promotion, the old master back with a new run id or answering
    // again: which of them asked depends on when each was seen), each said once
    const events = f.logs.filter(
      (l) =>
        (l.time as number) >= killedAt &&
        /^cache \S+ .*: (asking its \d+ consumers now|none of its consumers)/.test(l.msg),
    );
    expect(events.length).toBeGreaterThanOrEqual(1);
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
    console.log(
      `[suspect] sentinel: the old master back empty, every consumer on it ${backMs} ms after its restart (${Date.now() - restarted} ms ago)`,
    );
  }, 180_000);
});

describe('a loss wave', () => {
  const fixture = engineFixtures();

  it("makes the provider's other consumers suspect: asked at once, only the lost ones written", async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 20, timing: { verifyEvery: '2s', checkTimeout: '1s' } });
    await f.startHeld();
    await f.until('status healthy', async () => (await f.status()).healthy, 60_000);
    const node = new URL(provider.url).host;
    const admin = new Redis(provider.url);
    await admin.config('RESETSTAT');
    const dropped = Date.now();
    // three logins dropped, the server not restarted: no incarnation change, a wave of missing findings
    for (const c of f.consumers.slice(0, 3)) await admin.call('ACL', 'DELUSER', c.login);
    admin.disconnect();
    const said = await lineSaid(f, dropped, (l) => l.msg.startsWith(`cache ${node} lost logins`));
    expect(said.msg).toMatch(
      new RegExp(`^cache ${node} lost logins \\(a wave of logins found missing\\): asking its \\d+ consumers now$`),
    );
    await f.until('every consumer authenticates again', async () =>
      (await Promise.all(f.consumers.map((c) => f.canLogin(c)))).every(Boolean),
    );
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
    // the held ones were asked, not healed: one login written per dropped consumer
    expect(await setUsers(provider)).toBe(3);
  }, 180_000);
});

describe("the suspects in the queue's Redis", () => {
  /** How many times the server ran `command` (inside scripts too) since its counts were reset. */
  async function calls(admin: Redis, command: string): Promise<number> {
    const stats = await admin.info('commandstats');
    return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  }

  it('are made by bringing their routine waits forward, in batches; cleared as each is asked; a second event asks those asked since and those whose asking is not under way', async () => {
    const server = await ownBackend('redis');
    const [redis, admin] = [new Redis(server.url), new Redis(server.url)];
    const prefix = holdfastPrefix(`{suspects-${randomBytes(4).toString('hex')}}`);
    const coordination = createCoordination(redis, prefix, new NoteSeal(randomBytes(32)));
    const k = coordinationKeys(prefix);
    const keys = Array.from({ length: 2500 }, (_, i) => `cache/c${String(i).padStart(4, '0')}`);
    const later = Date.now() + 3_600_000;
    // the provider's consumers asked about, as their checks' releases note them; each with its routine wait an hour
    // away, but the last 100: braked (their own wait, not brought forward)
    await admin.zadd(k.checked('cache'), ...keys.flatMap((key, i) => [i, key]));
    await admin.zadd(k.due, ...keys.flatMap((key) => [later, key]));
    await admin.hset(
      k.dueWaits,
      ...keys.flatMap((key, i) => [
        key,
        JSON.stringify({ wait: i < 2400 ? 'verify' : 'brake', ticket: {}, seal: 's' }),
      ]),
    );
    const routine = keys.slice(0, 2400);
    const event = { node: '127.0.0.1:6379', why: 'new-run-id' as const, at: new Date().toISOString() };

    await admin.config('RESETSTAT');
    const before = Date.now();
    expect((await coordination.signals.markSuspects('cache', event)).sort()).toEqual(routine);
    // three batches of at most 1,000: one SADD and one ZADD each
    expect(await calls(admin, 'sadd')).toBe(3);
    expect(await calls(admin, 'zadd')).toBe(3);
    const due = await admin.zrange(k.due, 0, -1, 'WITHSCORES');
    const dueAt = new Map<string, number>();
    for (let i = 0; i < due.length; i += 2) dueAt.set(due[i]!, Number(due[i + 1]));
    expect(routine.every((key) => dueAt.get(key)! >= before && dueAt.get(key)! <= Date.now())).toBe(true);
    expect(keys.slice(2400).every((key) => dueAt.get(key) === later)).toBe(true);
    expect((await coordination.signals.suspects(['cache'])).get('cache')).toEqual({
      count: 2400,
      event: { ...event, of: 2500 },
    });

    // 40 asked (their checks released in one turn, begun after the event was seen), 10 could not ask: those stay
    // suspect
    await admin.config('RESETSTAT');
    const askedAt = Date.parse(event.at) + 1;
    await Promise.all([
      ...keys.slice(0, 40).map((key) => coordination.locks.release(key, 'cache', 't', undefined, 'asked', askedAt)),
      ...keys.slice(40, 50).map((key) => coordination.locks.release(key, 'cache', 't', undefined, 'could-not-ask')),
    ]);
    expect(await calls(admin, 'srem')).toBeLessThanOrEqual(2);
    expect((await coordination.signals.suspects(['cache'])).get('cache')?.count).toBe(2360);

    // stragglers (their checks could not ask): the waits of those still suspect brought forward once more
    await admin.zadd(k.due, ...routine.flatMap((key) => [later, key]));
    expect(await coordination.signals.askSuspectsAgain('cache')).toBe(2360);
    const forward = await admin.zrangebyscore(k.due, 0, Date.now());
    expect(forward.sort()).toEqual(routine.slice(40));

    // the node flaps. Asked again: the 40 asked since, and the 10 still suspect whose asking is not under way (their
    // checks could not ask and their next waits are an hour away). Not started twice: the 5 being checked now (locked:
    // their waits left alone) and the 2,345 whose waits are due already (brought forward, not taken yet)
    const [rescheduled, checking] = [keys.slice(40, 50), keys.slice(50, 55)];
    await admin.zadd(k.due, ...[...rescheduled, ...checking].flatMap((key) => [later, key]));
    await admin.hset(k.locks, ...checking.flatMap((key) => [key, `${Date.now() + 60_000} other-worker`]));
    const again = await coordination.signals.markSuspects('cache', { ...event, at: new Date().toISOString() });
    expect(again.sort()).toEqual(keys.slice(0, 50));
    const dueNow = new Set(await admin.zrangebyscore(k.due, 0, Date.now()));
    expect(rescheduled.every((key) => dueNow.has(key))).toBe(true);
    expect(checking.some((key) => dueNow.has(key))).toBe(false);
    expect((await coordination.signals.suspects(['cache'])).get('cache')?.count).toBe(2400);

    // all asked: the last event notes when, and both events are kept for the consumers' histories
    await admin.del(k.suspects('cache'));
    await coordination.signals.suspectsAsked('cache', '2026-12-07T06:05:12.000Z');
    const read = (await coordination.signals.suspects(['cache'])).get('cache');
    expect(read?.count).toBe(0);
    expect(read?.event?.asked).toBe('2026-12-07T06:05:12.000Z');
    expect((await coordination.signals.suspectEvents('cache')).map((e) => e.at)).toEqual([read!.event!.at, event.at]);
    redis.disconnect();
    admin.disconnect();
  });
});

describe('a check under way as a node event is seen', () => {
  it('leaves its consumer suspect at its release, its routine wait due at once; one begun after the event clears it', async () => {
    const server = await ownBackend('redis');
    const [redis, admin] = [new Redis(server.url), new Redis(server.url)];
    const prefix = holdfastPrefix(`{window-${randomBytes(4).toString('hex')}}`);
    const coordination = createCoordination(redis, prefix, new NoteSeal(randomBytes(32)));
    const k = coordinationKeys(prefix);
    const [before, after, braked] = ['cache/before', 'cache/after', 'cache/braked'];
    const later = Date.now() + 3_600_000;
    await admin.zadd(k.checked('cache'), 1, before, 2, after, 3, braked);
    await admin.zadd(k.due, later, before, later, after, later, braked);
    const wait = (kind: string) => JSON.stringify({ wait: kind, ticket: {}, seal: 's' });
    await admin.hset(k.dueWaits, before, wait('verify'), after, wait('verify'), braked, wait('verify'));
    // the three are being checked (their locks held) when the node's new run is seen
    const askedBefore = Date.now() - 1_000;
    for (const key of [before, after, braked])
      expect(await coordination.locks.claim(key, `t-${key}`, 60_000)).not.toBeNull();
    const event = { node: '127.0.0.1:6379', why: 'new-run-id' as const, at: new Date().toISOString() };
    expect((await coordination.signals.markSuspects('cache', event)).sort()).toEqual([after, before, braked]);
    // locked: made suspect, their waits left alone
    expect(await admin.zscore(k.due, before)).toBe(String(later));
    await admin.hset(k.dueWaits, braked, wait('brake')); // braked meanwhile: its own wait, left alone
    const endedAt = Date.now();
    const memo = { at: endedAt, outcome: 'held' as const, detail: null, rev: 1, deepAt: null };

    const released = await coordination.locks.releaseMany([
      { key: before, provider: 'cache', token: `t-${before}`, memo, asked: 'asked', askedAt: askedBefore },
      { key: after, provider: 'cache', token: `t-${after}`, memo, asked: 'asked', askedAt: Date.parse(event.at) },
      { key: braked, provider: 'cache', token: `t-${braked}`, memo, asked: 'asked', askedAt: askedBefore },
    ]);
    expect(released.map((r) => r.suspect)).toEqual([true, false, true]);
    expect((await admin.smembers(k.suspects('cache'))).sort()).toEqual([before, braked]);
    // asked again at once: its routine wait brought forward to when its check ended; a brake's wait is its own
    expect(await admin.zscore(k.due, before)).toBe(String(endedAt));
    expect(await admin.zscore(k.due, after)).toBe(String(later));
    expect(await admin.zscore(k.due, braked)).toBe(String(later));
    expect(await admin.hlen(k.locks)).toBe(0);

    // asked again, begun after the event: no longer suspect
    expect(await coordination.locks.claim(before, 't2', 60_000)).not.toBeNull();
    const again = await coordination.locks.release(before, 'cache', 't2', memo, 'asked', Date.now());
    expect(again.suspect).toBe(false);
    expect(await admin.smembers(k.suspects('cache'))).toEqual([braked]);
    // a loss wave's start, earlier than the event, does not move the cut back
    await coordination.signals.markSuspects('cache', { ...event, why: 'loss-wave' }, askedBefore - 5_000);
    expect(await admin.get(k.suspectCut('cache'))).toBe(String(Date.parse(event.at)));
    redis.disconnect();
    admin.disconnect();
  });
});
