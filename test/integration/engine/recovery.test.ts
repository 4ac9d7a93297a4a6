/** The scheduler can forget, and a worker can die mid-apply: nothing is left without a next step. */
import { dueCounts } from '../../support/due-set.js';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { stored } from '../../../src/store/record-codec.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { engineFixtures, readable } from './engine-fixture.js';

async function dropLogin(login: string): Promise<void> {
  const admin = new Redis(sharedBackend('redis').url);
  await admin.call('ACL', 'DELUSER', login);
  admin.disconnect();
}

describe('recovery', () => {
  const fixture = engineFixtures();

  it('re-creates every wait when the queue Redis restarts empty', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({
      queue,
      consumers: 10,
      timing: { verifyEvery: '1s', checkTimeout: '500ms' },
      sentinelEvery: '1s',
    });
    await f.startHeld();

    // a key of the test's own, which nothing in holdfast writes: the engine's sweep re-creates its
    // own keys within a second of the restart, so only this one tells the restart forgot everything
    const marker = 'test:recovery:marker';
    const before = new Redis(queue.url);
    await before.set(marker, 'before the restart');
    before.disconnect();
    await queue.restart({ keepData: false });
    const admin = new Redis(queue.url);
    expect(await admin.exists(marker)).toBe(0);
    await dropLogin(f.consumers[3]!.login);
    // checks resume from the records alone: the dropped login is noticed and applied again
    await f.until('the dropped login healed', () => f.canLogin(f.consumers[3]!), 10_000);
    const flushed = Date.now();
    await f.until('every consumer checked again', async () =>
      (await f.status()).consumers.every((c) => c.lastCheck !== null && Date.parse(c.lastCheck.at) > flushed),
    );
    // one wait per consumer, in the due set (a wait a round took stays in it, leased), and no wait job beside it
    await f.until(
      'every consumer with its wait again',
      async () => (await dueCounts(admin, f.config.queue.prefix)).scheduled === 10,
      10_000,
    );
    expect(await admin.zcard(`${f.config.queue.prefix}:${f.config.queue.name}:delayed`)).toBe(0);
    admin.disconnect();
    // an expected fault, said once: not once per job that was in flight
    const since = f.logs.filter((l) => (l.time as number) >= flushed - 10_000);
    expect(since.filter((l) => l.msg.startsWith("the queue's Redis has forgotten every job"))).toHaveLength(1);
    expect(since.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('says once that the queue forgot its jobs when it is flushed under running checks, and resumes them all', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({
      queue,
      consumers: 40,
      timing: { verifyEvery: '300ms', checkTimeout: '300ms' },
      sentinelEvery: '1s',
    });
    await f.startHeld();

    const admin = new Redis(queue.url);
    await admin.flushall(); // about a hundred checks a second are running
    const flushed = Date.now();
    await f.until('every consumer checked again', async () => {
      const { consumers } = await f.status();
      return (
        consumers.length === f.consumers.length &&
        consumers.every((c) => c.lastCheck !== null && Date.parse(c.lastCheck.at) > flushed + 500)
      );
    });
    admin.disconnect();
    const since = f.logs.filter((l) => (l.time as number) >= flushed);
    expect(since.filter((l) => l.msg.startsWith("the queue's Redis has forgotten every job"))).toHaveLength(1);
    expect(since.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    expect((await f.status()).healthy).toBe(true);
  });

  it('applies again a record a dead worker left mid-apply', async () => {
    const f = await fixture({
      consumers: 2,
      timing: { verifyEvery: '1s', checkTimeout: '500ms' },
      sentinelEvery: '1s',
    });
    const first = await f.startHeld();
    const victim = f.consumers[0]!;
    const record = readable(await first.store.get(victim.key))!;
    await first.stop();
    f.engines.splice(0);

    // what a worker killed between writing `applying` and calling the backend leaves behind:
    // the record says applying, its deadline has passed, no job and no lock remain
    const past = new Date(Date.now() - 60_000);
    const client = new MongoClient(sharedBackend('mongodb').url);
    await client
      .db(f.config.store.database)
      .collection('consumers')
      .updateOne(
        { _id: victim.key as never },
        {
          $set: {
            machine: stored.machine({ ...record.machine, state: 'applying' }),
            effectUntil: past,
            timer: null,
            rev: record.rev + 1,
          },
        },
      );
    await client.close();
    await dropLogin(victim.login);

    await f.start();
    await f.until('the victim applied again', async () => (await f.canLogin(victim)) && (await f.allHeld()), 10_000);
    const history = readable(await f.engines[0]!.store.get(victim.key))!.history.map((h) => `${h.from}→${h.to}`);
    expect(history.at(-1)).toBe('applying→held');
  });
});
