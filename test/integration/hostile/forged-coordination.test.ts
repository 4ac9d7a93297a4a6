/**
 * Values written by hand into holdfast's part of the queue's Redis (as anyone who can write it
 * could): check memos, revisions, a provider's pause, its orphans, the store's outage and a
 * record in brief that are not what holdfast writes. Each is treated as absent: no job fails,
 * no check is skipped, the status does not repeat them, and the next write replaces them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { queueRedis, type QueueRedis } from '../../../src/queue/bull-connection.js';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';

const clients: QueueRedis[] = [];
afterAll(() => clients.forEach((c) => c.disconnect()));

describe('coordination values written by hand', () => {
  const fixture = engineFixtures();

  it('are treated as absent: every consumer is checked again and stays held, no job fails, the status shows none of them', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    await f.startHeld();
    const [first, second] = f.consumers as [Consumer, Consumer];
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    clients.push(redis);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    await redis.hset(
      keys.memos,
      first.key,
      'not json {',
      second.key,
      JSON.stringify({ at: 'yesterday', outcome: 'held' }),
    );
    await redis.hset(keys.revs, first.key, 'seven');
    await redis.set(keys.paused('cache'), JSON.stringify({ since: 1 }));
    await redis.set(keys.orphans('cache'), JSON.stringify(['intruder']));
    await redis.set(keys.storeDown, '{"reason":', 'PX', 60_000);
    const coordination = createCoordination(
      redis,
      holdfastPrefix(f.config.queue.prefix),
      new NoteSeal(f.config.fingerprintKey),
    );
    const writtenAt = Date.now();

    // each consumer checked again since, at its record's revision, and held
    const records = await f.engines[0]!.store.list();
    await f.until('both consumers checked again', async () => {
      const memos = await coordination.locks.checkMemos([first.key, second.key]);
      return records.every((r) => {
        const memo = memos.get(r._id);
        return memo !== undefined && memo.at > writtenAt && memo.outcome === 'held' && memo.rev === r.rev;
      });
    });
    expect(await coordination.signals.pauses(['cache'])).toEqual(new Map());
    expect(await coordination.notes.orphans(['cache'])).toEqual(new Map());
    expect(await coordination.signals.storeOutage()).toBeNull();
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.providers.map((p) => [p.provider, p.paused, p.problems])).toEqual([['cache', null, []]]);
    expect(status.consumers.map((c) => [c.consumer, c.state]).sort()).toEqual([
      [first.key, 'held'],
      [second.key, 'held'],
    ]);
    // nothing failed because of the forged values (an apply that missed its deadline during the first applies, on a
    // loaded machine, is before them)
    expect(f.logs.filter((l) => Number(l.time) >= writtenAt && (l.level >= 50 || l.msg.includes('failed')))).toEqual(
      [],
    );
    expect(await f.canLogin(first)).toBe(true);
    expect(await f.canLogin(second)).toBe(true);
  });

  it('a record in brief that does not decode is left out of the status (which still answers) until it is written again', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '1s' }, sentinelEvery: '5s' });
    await f.startHeld();
    const [first, second] = f.consumers as [Consumer, Consumer];
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    clients.push(redis);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    const [state] = (await redis.hget(keys.briefs, first.key))!.split(' ', 1);
    await redis.hset(keys.briefs, first.key, `${state} 9 {"since":"then"`);
    const writtenAt = Date.now();

    // unless a sweep wrote it again meanwhile, the first is left out; the status answers either way
    const status = await f.status();
    expect(status.consumers.map((c) => [c.consumer, c.state])).toEqual(expect.arrayContaining([[second.key, 'held']]));
    expect(status.consumers.every((c) => c.state === 'held' && [first.key, second.key].includes(c.consumer))).toBe(
      true,
    );
    // a held consumer's checks write nothing (not even the first after its apply): the sweep writes every brief again
    await f.engines[0]!.sweeper!.sweep();
    await f.until('its brief written again', () => f.allHeld(), 40_000);
    expect(f.logs.filter((l) => Number(l.time) >= writtenAt && (l.level >= 50 || l.msg.includes('failed')))).toEqual(
      [],
    );
  });
});
