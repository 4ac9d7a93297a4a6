/**
 * The record store's group commit, on the harness's store (FerretDB indexed where no Docker
 * runs): the first records of many consumers created together go in a few `insertMany`s, each
 * consumer still told of its own record (one that exists already is that one's conflict alone),
 * and a burst of updates larger than FerretDB answers in one bulk is still written, every one.
 */
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART } from '../../../machines/consumer-machine.js';
import { firstSnapshot, persist } from '../../../machines/machine-step.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';
import type { ConsumerRecord } from '../../../src/store/consumer-record.js';
import { ConsumerStore } from '../../../src/store/consumer-store.js';
import { sharedBackend } from '../../backends/index.js';

const N = 300;

function record(i: number): ConsumerRecord {
  const key = `cache/c${String(i).padStart(4, '0')}`;
  const now = new Date();
  return {
    _id: key,
    provider: 'cache',
    consumerId: key.slice('cache/'.length),
    desired: { login: `app_${i}`, values: {}, secretPath: `/grants/${i}`, specHash: `h${i}`, source: 'cache.yaml:1', removed: false, problems: [] },
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
  /** `insert` commands sent to the store: one round trip each. */
  let inserts = 0;

  beforeAll(async () => {
    client = new MongoClient(sharedBackend('mongodb').url, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'insert') inserts++;
    });
    store = await ConsumerStore.open(client.db(`hf_group_${process.pid}_${Date.now()}`));
  });
  afterAll(async () => {
    await client?.close();
  });

  it('creates the first records of many consumers in a few round trips, and a record that exists is that consumer\'s conflict alone', async () => {
    await store.insert(record(0));
    const before = inserts;
    const results = await Promise.allSettled(Array.from({ length: N }, (_, i) => store.insert(record(i))));
    const conflicts = results.filter((r) => r.status === 'rejected');
    expect(conflicts).toHaveLength(1);
    expect(isHoldfastError((conflicts[0] as PromiseRejectedResult).reason, 'REVISION_CONFLICT')).toBe(true);
    expect(results[0]!.status).toBe('rejected');
    for (let i = 1; i < N; i += 37) expect(((await store.get(record(i)._id)) as ConsumerRecord | null)?.desired.login).toBe(`app_${i}`);
    expect(inserts - before).toBeLessThan(N / 10);
  });

  it('writes a burst of updates larger than one bulk FerretDB answers (100), every one', async () => {
    const saves = Array.from({ length: N }, (_, i) => store.save(record(i)._id, 1, { timer: null, effectUntil: new Date(1000 + i) }, [], new Date()));
    expect(await Promise.all(saves)).toEqual(Array.from({ length: N }, () => 2));
    for (let i = 0; i < N; i += 41) expect(((await store.get(record(i)._id)) as ConsumerRecord | null)?.effectUntil?.getTime()).toBe(1000 + i);
  }, 120_000);

});
