/**
 * The record store's group commit, on the harness's store (FerretDB indexed where no Docker
 * runs): the first records of many consumers created together go in a few `insertMany`s, each
 * consumer still told of its own record (one that exists already is that one's conflict alone),
 * and a burst of updates larger than FerretDB answers in one bulk is still written, every one,
 * also while three processes' stores write their bursts at once (FerretDB 1.24 hangs for good
 * once about 100 update statements are open over all its clients: `group-commit.ts`); and a bulk
 * in which the server refuses one statement fails that caller alone, its record left as it was.
 */
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART } from '../../../machines/consumer-machine.js';
import { firstSnapshot, persist } from '../../../machines/machine-step.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import type { ConsumerRecord } from '../../../src/store/consumer-record.js';
import { ConsumerStore, STORE_COLLECTIONS } from '../../../src/store/consumer-store.js';
import { GroupCommit } from '../../../src/store/group-commit.js';
import { stored, type RecordDocument } from '../../../src/store/record-codec.js';
import { sharedBackend } from '../../backends/index.js';

const N = 300;

function record(i: number): ConsumerRecord {
  const key = `cache/c${String(i).padStart(4, '0')}`;
  const now = new Date();
  return {
    _id: key,
    provider: 'cache',
    consumerId: key.slice('cache/'.length),
    desired: {
      login: `app_${i}`,
      values: {},
      secretPath: `/grants/${i}`,
      specHash: `h${i}`,
      source: 'cache.yaml:1',
      removed: false,
      problems: [],
    },
    desiredAt: now.getTime(),
    machine: persist(firstSnapshot(CHART, key)),
    stateSince: now,
    rev: 1,
    appliedAt: null,
    timer: null,
    effectUntil: null,
    lastCheck: null,
    history: [],
    createdAt: now,
    updatedAt: now,
  };
}

describe('the record store, many consumers at once', () => {
  let client: MongoClient;
  let store: ConsumerStore;
  const database = `hf_group_${process.pid}_${Date.now()}`;
  /** `insert` commands sent to the store: one round trip each. */
  let inserts = 0;

  beforeAll(async () => {
    client = new MongoClient(sharedBackend('mongodb').url, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'insert') inserts++;
    });
    store = await ConsumerStore.open(client.db(database));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("creates the first records of many consumers in a few round trips, and a record that exists is that consumer's conflict alone", async () => {
    await store.insert(record(0));
    const before = inserts;
    const results = await Promise.allSettled(Array.from({ length: N }, (_, i) => store.insert(record(i))));
    const conflicts = results.filter((r) => r.status === 'rejected');
    expect(conflicts).toHaveLength(1);
    expect(isHoldfastError((conflicts[0] as PromiseRejectedResult).reason, 'REVISION_CONFLICT')).toBe(true);
    expect(results[0]!.status).toBe('rejected');
    for (let i = 1; i < N; i += 37)
      expect(((await store.get(record(i)._id)) as ConsumerRecord | null)?.desired.login).toBe(`app_${i}`);
    expect(inserts - before).toBeLessThan(N / 10);
  });

  it('writes a burst of updates larger than one bulk FerretDB answers (100), every one', async () => {
    const saves = Array.from({ length: N }, (_, i) =>
      store.save(record(i)._id, 1, { timer: null, effectUntil: new Date(1000 + i) }, [], new Date()),
    );
    expect(await Promise.all(saves)).toEqual(Array.from({ length: N }, () => 2));
    for (let i = 0; i < N; i += 41)
      expect(((await store.get(record(i)._id)) as ConsumerRecord | null)?.effectUntil?.getTime()).toBe(1000 + i);
  }, 120_000);

  it("writes the bursts of three processes' stores at once, every one (three holdfast processes on one FerretDB)", async () => {
    const clients = [1, 2, 3].map(() => new MongoClient(sharedBackend('mongodb').url));
    try {
      const stores = await Promise.all(clients.map((c) => ConsumerStore.open(c.db(database))));
      // each store its own hundred records, all at once, twice over (a record's writes one after the other, as its one
      // writer's are)
      const bursts = stores.map(async (other, s) => {
        for (const round of [0, 1]) {
          await Promise.all(
            Array.from({ length: 100 }, (_, j) =>
              other.save(
                record(s * 100 + j)._id,
                2 + round,
                { timer: null, effectUntil: new Date(5000 + s * 100 + j) },
                [],
                new Date(),
              ),
            ),
          );
        }
      });
      // a FerretDB that hangs never answers: bounded here, well past what three bursts of 200 take
      const all = Promise.all(bursts).then(() => 'written');
      expect(
        await Promise.race([
          all,
          new Promise((r) => setTimeout(() => r('FerretDB did not answer within 60 s'), 60_000)),
        ]),
      ).toBe('written');
      for (let i = 0; i < 300; i += 29)
        expect(((await store.get(record(i)._id)) as ConsumerRecord | null)?.effectUntil?.getTime()).toBe(5000 + i);
    } finally {
      await Promise.all(clients.map((c) => c.close(true)));
    }
  }, 120_000);

  it("a bulk of updates after first applies in which the store refuses one statement: the others are written, that consumer's record still says applying", async () => {
    const applying = (i: number): ConsumerRecord => {
      const r = record(1000 + i);
      return { ...r, machine: { ...r.machine, state: 'applying' } };
    };
    const keys = Array.from({ length: 12 }, (_, i) => applying(i)._id);
    await Promise.all(keys.map((_, i) => store.insert(applying(i))));
    const group = new GroupCommit(client.db(database).collection<RecordDocument>(STORE_COLLECTIONS.records));
    const held = (i: number) => ({
      $set: { machine: stored.machine({ ...applying(i).machine, state: 'held' }), rev: 2 },
    });
    // the statement of consumer 5 is one the server refuses ($inc of a string): its record is not changed at all
    const poisoned = (i: number) => ({ ...held(i), $inc: { consumerId: 1 } });
    const outcomes = await Promise.allSettled(keys.map((key, i) => group.update(key, i === 5 ? poisoned(i) : held(i))));
    expect(outcomes.map((o) => o.status)).toEqual(keys.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')));
    const refused = (outcomes[5] as PromiseRejectedResult).reason as unknown;
    expect(isHoldfastError(refused, 'STORE_UNAVAILABLE')).toBe(true);
    expect((refused as Error).message).toContain(`could not save the record of ${keys[5]}`);
    const states = await Promise.all(keys.map(async (key) => ((await store.get(key)) as ConsumerRecord).machine.state));
    expect(states).toEqual(keys.map((_, i) => (i === 5 ? 'applying' : 'held')));
    expect(((await store.get(keys[5]!)) as ConsumerRecord).rev).toBe(1);
  });
});
