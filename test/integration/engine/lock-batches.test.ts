/**
 * The locks and the due set in batches, on a real Redis of this file's own: what a round does to
 * the queue's Redis (take its waits, claim their locks, release them, settle the waits) costs a
 * number of commands that does not grow with the round's size (`INFO commandstats` counts those
 * run inside scripts too), and batching keeps every rule of the lock: one holder at a time, until
 * it releases or its time runs out; only the holder extends or releases it; a lock of the release
 * before the locks were batched (a key of its own) is honoured until it goes; a lock value written
 * by hand is no lock.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownBackend, type OwnedBackend } from '../../backends/index.js';
import { createCoordination, createDueSet, holdfastPrefix, type CheckMemo } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { NoteSeal } from '../../../src/queue/note-seal.js';
import type { ConsumerBrief } from '../../../src/queue/consumer-brief.js';

let server: OwnedBackend;
let redis: Redis;
let admin: Redis;

beforeAll(async () => {
  server = await ownBackend('redis');
  redis = new Redis(server.url);
  admin = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  admin?.disconnect();
  await server?.stop();
});

function fresh() {
  const prefix = holdfastPrefix(`{locks-${randomBytes(4).toString('hex')}}`);
  return {
    coordination: createCoordination(redis, prefix, new NoteSeal(randomBytes(32))),
    due: createDueSet(redis, prefix),
    keys: coordinationKeys(prefix),
  };
}

/** Every command the server ran (inside scripts too) since its counts were last reset, but the counting's own. */
async function commandsRun(): Promise<number> {
  const stats = (await admin.info('commandstats')).split('\n');
  let calls = 0;
  for (const line of stats) {
    const [, name, n] = /^cmdstat_([^:]+):calls=(\d+)/.exec(line) ?? [];
    if (name && n && name !== 'info' && !name.startsWith('config')) calls += Number(n);
  }
  return calls;
}

const memo = (at: number): CheckMemo => ({ at, outcome: 'held', detail: null, rev: 1, deepAt: null });

/**
 * The waits of `n` consumers scheduled, each on its own as its record's writer does it, then one round of them as
 * `due-rounds.ts` and `consumer-run.ts` do it: the commands it cost the server.
 */
async function roundOf(n: number): Promise<number> {
  const { coordination, due } = fresh();
  const keys = Array.from({ length: n }, (_, i) => `cache/c${i}`);
  const now = Date.now();
  await coordination.locks.rememberRevision(keys[0]!, 1);
  await admin.config('RESETSTAT');

  const scheduled = await Promise.all(keys.map((key) => due.schedule([{ key, rev: 1, dueAt: now - 1, text: '{}' }])));
  expect(scheduled.every((one) => one === 1)).toBe(true);
  const { taken } = await due.take(now, now + 30_000, n);
  const claims = await Promise.all(taken.map((t) => coordination.locks.claim(t.key, `token-${t.key}`, 10_000)));
  const released = await Promise.all(
    taken.map((t, i) =>
      coordination.locks.release(t.key, 'cache', `token-${t.key}`, memo(now), i % 2 ? 'asked' : 'could-not-ask', now),
    ),
  );
  await due.settle(taken.map((t) => ({ key: t.key, rev: t.rev, at: now + 60_000 })));
  const run = await commandsRun();

  expect(taken.map((t) => t.key).sort()).toEqual([...keys].sort());
  expect(claims.every((c) => c !== null)).toBe(true);
  expect(Math.max(...released.map((r) => r.askedAbout ?? 0))).toBe(n); // the provider's consumers asked about
  return run;
}

describe('a round in the queue’s Redis', () => {
  it('costs as many commands for 128 consumers as for 2: each script works on the batch, not on each consumer', async () => {
    await roundOf(2); // the scripts loaded
    const small = await roundOf(2);
    const large = await roundOf(128);
    expect({ small, large }).toEqual({ small, large: small });
    expect(small).toBeLessThanOrEqual(32);
  });
});

/** How many times the server ran `command` since its counts were last reset. */
async function callsOf(command: string): Promise<number> {
  const line = (await admin.info('commandstats')).split('\n').find((l) => l.startsWith(`cmdstat_${command}:`));
  return Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0);
}

describe('a round’s scripts on the wire', () => {
  it('are sent by their digest once the server knows them, and by their text again after it forgot them', async () => {
    const { locks } = fresh().coordination;
    const keys = Array.from({ length: 8 }, (_, i) => `cache/c${i}`);
    /** Every lock of `keys` claimed and released as one turn's batch each: whether each claim took its lock. */
    const claimAndRelease = async (): Promise<boolean[]> => {
      const claims = await Promise.all(keys.map((key) => locks.claim(key, `token-${key}`, 10_000)));
      await Promise.all(
        keys.map((key) => locks.release(key, 'cache', `token-${key}`, memo(Date.now()), 'asked', Date.now())),
      );
      return claims.map((claim) => claim !== null);
    };
    await claimAndRelease(); // the scripts loaded
    await admin.config('RESETSTAT');
    expect(await claimAndRelease()).toEqual(keys.map(() => true));
    expect({ eval: await callsOf('eval'), evalsha: await callsOf('evalsha') }).toEqual({ eval: 0, evalsha: 2 });

    await admin.script('FLUSH');
    await admin.config('RESETSTAT');
    expect(await claimAndRelease()).toEqual(keys.map(() => true)); // and free again: taken once more
    expect(await claimAndRelease()).toEqual(keys.map(() => true));
    expect({ eval: await callsOf('eval'), evalsha: await callsOf('evalsha') }).toEqual({ eval: 2, evalsha: 4 });
  });
});

describe('a batch of claims', () => {
  it('takes a free lock once, even when claimed twice in one turn; a held one only once released or run out', async () => {
    const { coordination } = fresh();
    const { locks } = coordination;
    const [first, second] = await Promise.all([
      locks.claim('cache/a', 'one', 10_000),
      locks.claim('cache/a', 'two', 10_000),
    ]);
    expect([first !== null, second !== null]).toEqual([true, false]);
    expect(await locks.claim('cache/a', 'three', 10_000)).toBeNull();

    // only the holder extends or releases it
    expect(await locks.extend('cache/a', 'two', 10_000)).toBe(false);
    expect(await locks.extend('cache/a', 'one', 10_000)).toBe(true);
    await locks.release('cache/a', 'cache', 'two');
    expect(await locks.claim('cache/a', 'three', 10_000)).toBeNull();
    await locks.release('cache/a', 'cache', 'one');
    expect(await locks.claim('cache/a', 'three', 50)).not.toBeNull();

    // a lock whose time ran out is free, and its former holder cannot extend it
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await locks.extend('cache/a', 'three', 10_000)).toBe(false);
    expect(await locks.claim('cache/a', 'four', 10_000)).not.toBeNull();
  });

  it('honours a lock of the release before the locks were batched until it goes, and reads the removal mark', async () => {
    const { coordination, keys } = fresh();
    const { locks } = coordination;
    await redis.set(keys.lock('cache/old'), 'an older worker', 'PX', 10_000);
    await locks.markRemoved('cache/gone', 1_700);
    const [old, gone] = await Promise.all([
      locks.claim('cache/old', 'one', 10_000),
      locks.claim('cache/gone', 'one', 10_000),
    ]);
    expect(old).toBeNull();
    expect(gone?.removedAt).toBe(1_700);
    await redis.del(keys.lock('cache/old'));
    expect(await locks.claim('cache/old', 'one', 10_000)).not.toBeNull();
  });

  it('takes over a lock value written by hand', async () => {
    const { coordination, keys } = fresh();
    await redis.hset(keys.locks, 'cache/forged', 'not a lock');
    await expect(coordination.locks.claim('cache/forged', 'one', 10_000)).resolves.not.toBeNull();
  });
});

describe('the due set in batches', () => {
  it('judges a consumer’s waits of one turn in order, and takes the due ones up to the limit with when the next falls due', async () => {
    const { due } = fresh();
    const now = Date.now();
    const wait = (key: string, rev: number, dueAt: number, text = `{"rev":${rev}}`) => ({ key, rev, dueAt, text });
    const scheduled = await Promise.all([
      due.schedule([wait('cache/a', 2, now - 30)]),
      due.schedule([wait('cache/a', 1, now - 40)]), // an older revision after a newer one: left alone
      due.schedule([wait('cache/a', 2, now - 50, '{"again":2}')]), // the same revision: its data only
      due.schedule([wait('cache/b', 1, now - 20), wait('cache/c', 1, now - 10), wait('cache/d', 1, now + 60_000)]),
    ]);
    expect(scheduled).toEqual([1, 0, 0, 3]);

    const first = await due.take(now, now + 30_000, 2);
    expect(first.taken.map((t) => [t.key, t.rev, t.text, t.dueAt])).toEqual([
      ['cache/a', '2', '{"again":2}', now - 30],
      ['cache/b', '1', '{"rev":1}', now - 20],
    ]);
    expect(first.nextAt).toBe(now - 10); // one still due
    const second = await due.take(now, now + 30_000, 5);
    expect(second.taken.map((t) => t.key)).toEqual(['cache/c']);
    expect(second.nextAt).toBe(now + 30_000); // the leases end before cache/d falls due
    const third = await due.take(now + 100_000, now + 130_000, 5);
    expect(third.taken.map((t) => t.key)).toEqual(['cache/a', 'cache/b', 'cache/c', 'cache/d']);
    expect(third.nextAt).toBe(now + 130_000);

    // settled: only at the revision taken; done with, or due again
    await due.settle([
      { key: 'cache/a', rev: '2', at: null },
      { key: 'cache/b', rev: '7', at: null },
      { key: 'cache/c', rev: '1', at: now + 1_000 },
    ]);
    const left = await due.take(now + 200_000, now + 230_000, 5);
    expect(left.taken.map((t) => [t.key, t.dueAt])).toEqual([
      ['cache/c', now + 1_000],
      ['cache/b', now + 130_000],
      ['cache/d', now + 130_000],
    ]);
    expect(await due.take(now + 200_000, now + 230_000, 5)).toEqual({ taken: [], nextAt: now + 230_000 });
  });
});

describe('records in brief noted together, as the sweep notes them', () => {
  const brief = (rev: number, since: number): ConsumerBrief => ({
    rev,
    state: 'held',
    since,
    login: 'app',
    brakeCount: 0,
    reason: null,
    dueAt: null,
    lastCheck: null,
  });

  /** `n` consumers noted in one call: the commands it cost the server. */
  async function notesOf(n: number): Promise<number> {
    const { coordination } = fresh();
    await admin.config('RESETSTAT');
    await coordination.notes.noteBriefs(Array.from({ length: n }, (_, i) => [`cache/c${i}`, brief(1, 1_000)]));
    return commandsRun();
  }

  it('cost one script call, and one command more per consumer held (its asked-at time read)', async () => {
    await notesOf(2);
    const small = await notesOf(2);
    const large = await notesOf(128);
    expect(large - small).toBe(126);
  });

  it('are judged in order: an older revision after a newer one is ignored; held since counts as asked unless asked later', async () => {
    const { coordination, keys } = fresh();
    await redis.zadd(keys.checked('cache'), 5_000, 'cache/later');
    await coordination.notes.noteBriefs([
      ['cache/a', brief(2, 2_000)],
      ['cache/a', brief(1, 3_000)],
      ['cache/later', brief(1, 4_000)],
    ]);
    expect(await redis.hget(keys.states, 'cache/a')).toMatch(/^held 2\b/);
    expect(await redis.zscore(keys.checked('cache'), 'cache/a')).toBe('2000');
    expect(await redis.zscore(keys.checked('cache'), 'cache/later')).toBe('5000');
  });
});
