import { isDeepStrictEqual } from 'node:util';
/**
 * Waits written by hand into the due set (as anyone who can write the queue's Redis could): a
 * ticket changed under its seal, data that is not JSON at a revision no record had, a revision that
 * is not a count. None is taken at its word: the change is not used, the records' own waits
 * replace them, every consumer is checked again at its record's revision, and nothing fails.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { queueRedis, type QueueRedis } from '../../../src/queue/bull-connection.js';
import { createCoordination, holdfastPrefix } from '../../../src/queue/coordination.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { engineFixtures, type Consumer } from '../engine/engine-fixture.js';

const clients: QueueRedis[] = [];
afterAll(() => clients.forEach((c) => c.disconnect()));

describe('due waits written by hand', () => {
  const fixture = engineFixtures();

  it('are not taken at their word: the records decide, every consumer is checked again, and its own wait is back', async () => {
    const f = await fixture({ consumers: 3, timing: { verifyEvery: '500ms', checkTimeout: '500ms' } });
    const engine = await f.startHeld();
    const [first, second, third] = f.consumers as [Consumer, Consumer, Consumer];
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    clients.push(redis);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    const real = JSON.parse((await redis.hget(keys.dueWaits, first.key))!) as {
      wait: string;
      ticket: { spec: { login: string; secretPath: string } };
      seal: string;
    };
    // the first's ticket made to check another login with the queue's admin secret, its seal kept
    const changed = {
      ...real,
      ticket: { ...real.ticket, spec: { ...real.ticket.spec, login: 'default', secretPath: `${f.dir}/secrets/queue` } },
    };
    const firstRev = await redis.hget(keys.dueRevs, first.key);
    const now = Date.now();
    await redis
      .multi()
      .hset(keys.dueWaits, first.key, JSON.stringify(changed), second.key, 'not json {', third.key, '{}')
      .hset(keys.dueRevs, second.key, '999999', third.key, 'seven')
      .zadd(keys.due, now, first.key, now, second.key, now, third.key)
      .exec();
    const writtenAt = Date.now();

    const coordination = createCoordination(
      redis,
      holdfastPrefix(f.config.queue.prefix),
      new NoteSeal(f.config.fingerprintKey),
    );
    const records = await engine.store.list();
    await f.until('every consumer checked again at its revision, its own wait back', async () => {
      const memos = await coordination.locks.checkMemos(f.consumers.map((c) => c.key));
      const revs = await redis.hmget(keys.dueRevs, ...records.map((r) => r._id));
      // the first's own wait back, not only its revision: a check already under way when the waits were written
      // can be noted before a round has taken the forged one
      const firstWait = await redis.hget(keys.dueWaits, first.key);
      if (firstWait === null || !isDeepStrictEqual(JSON.parse(firstWait), real)) return false;
      return records.every((r, i) => {
        const memo = memos.get(r._id);
        return (
          memo !== undefined &&
          memo.at > writtenAt &&
          memo.outcome === 'held' &&
          memo.rev === r.rev &&
          revs[i] === String(r.rev)
        );
      });
    });
    expect(await redis.hget(keys.dueRevs, first.key)).toBe(firstRev);
    expect(JSON.parse((await redis.hget(keys.dueWaits, first.key))!)).toEqual(real);
    // said once, as for a job written by hand; nothing failed
    const said = f.logs.filter(
      (l) => (l.time as number) >= writtenAt - 1000 && l.msg.includes('was not written by holdfast'),
    );
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain(
      "its ticket is not sealed by holdfast: not used, the consumer's record is read instead",
    );
    expect(f.logs.filter((l) => l.level >= 50 && !l.msg.includes('was not written by holdfast'))).toEqual([]);
    expect((await f.status()).healthy).toBe(true);
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
  });
});
