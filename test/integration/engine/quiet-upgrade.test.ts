/**
 * An upgrade is quiet: holdfast stopped with every consumer held and started again (a restart, or
 * a new release on the same store, queue and cache) applies no consumer whose spec and grant
 * secret did not change, whatever the release before it left behind: records of every form it
 * may have kept (version 1's XState snapshot, the sub-documents before version 3, today's text),
 * check memos naming the revision `epoch`, waits under the due set's first names, or none at all
 * (the sweep makes them again from the records), and fingerprints made under another fingerprint
 * key (a release started from another directory, or a container whose key file was not kept).
 *
 * Each test asks what an operator would check: the cache's own `ACL SETUSER`s of the consumers'
 * logins (through a counting proxy), the transitions the log says, and the status, once every
 * consumer has been asked again since the start.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { MongoClient, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { secretFingerprint } from '../../../src/secrets/fingerprint.js';
import { coordinationKeys, holdfastPrefix } from '../../../src/queue/coordination/keys.js';
import type { ConsumerRecord } from '../../../src/store/consumer-record.js';
import { decodeRecord, encodeDesired, encodeMachine } from '../../../src/store/record-codec.js';
import { ownBackend, sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { redisCommandCounter, type RedisCommandCounter } from '../../support/redis-command-counter.js';
import { engineFixtures, readable, type EngineFixture } from './engine-fixture.js';

/** As many consumers as the finding (300). */
const CONSUMERS = 300;
const timing = { verifyEvery: '3s', checkTimeout: '2s' };

/** A record as documents before version 3 kept it: its parts as sub-documents, the timer's revision named `epoch`. */
function subDocuments(record: ConsumerRecord): Document {
  const { timer } = record;
  return {
    ...record,
    machine: encodeMachine(record.machine),
    desired: encodeDesired(record.desired),
    timer: timer ? { epoch: timer.rev, wait: timer.wait, dueAt: timer.dueAt } : null,
  };
}

/**
 * A record as holdfast kept it before machine versions: XState's whole snapshot, `applied: { at }`, no `desiredAt`, a
 * timer naming XState's event; the same revision.
 */
function versionOne(record: ConsumerRecord): Document {
  const { machine, appliedAt, desiredAt: _desiredAt, refused: _refused, timer: _timer, ...kept } = subDocuments(record);
  const { state, context } = machine as { state: string; context: { appliedSecretMac: string | null } };
  return {
    ...kept,
    snapshot: { status: 'active', value: state, historyValue: {}, context, children: {} },
    state,
    dirty: false,
    desiredRev: 1,
    applied: { specHash: record.desired.specHash, secretMac: context.appliedSecretMac, at: appliedAt as Date },
    nextDueAt: record.timer?.dueAt ?? null,
    timer: record.timer
      ? {
          epoch: record.timer.rev,
          event: `xstate.after.${record.timer.wait}.consumer.${state}`,
          dueAt: record.timer.dueAt,
        }
      : null,
  };
}

interface Upgrade {
  f: EngineFixture;
  cache: RedisCommandCounter;
  queue: BackendEndpoint;
}

/** 300 consumers held, each checked deeply since its apply, on their own cache (counted) and queue's Redis. */
async function heldFleet(fixture: ReturnType<typeof engineFixtures>): Promise<Upgrade> {
  const [queue, server] = await Promise.all([ownBackend('redis'), ownBackend('redis')]);
  const cache = await redisCommandCounter(server);
  const f = await fixture({ queue, provider: cache.endpoint, consumers: CONSUMERS, timing });
  await f.startHeld();
  await f.until('every consumer checked deeply since its apply', () => f.settled(), 60_000);
  await f.engines[0]!.stop();
  f.engines.splice(0);
  return { f, cache, queue };
}

/**
 * Starts the fixture's engine again and waits until every consumer has been asked since (its check memo newer than
 * the start); returns what the cache and the log saw meanwhile.
 */
async function restarted({ f, cache }: Upgrade): Promise<{ setusers: string[]; moves: string[] }> {
  const from = Date.now();
  const logged = f.logs.length;
  const engine = await f.start();
  const keys = f.consumers.map((c) => c.key);
  await f.until(
    'every consumer asked again since the start',
    async () => {
      const memos = await engine.coordination.locks.checkMemos(keys);
      return keys.every((key) => (memos.get(key)?.at ?? 0) > from);
    },
    45_000,
  );
  const logins = new Set(f.consumers.map((c) => c.login));
  return {
    setusers: cache.commands
      .filter((c) => c.at >= from && c.name === 'ACL SETUSER' && logins.has(c.target ?? ''))
      .map((c) => c.target!),
    // a transition into an apply, a loss, or a quiet heal (`held → lost → held`, not written)
    moves: f.logs
      .slice(logged)
      .filter((l) => l.to === 'applying' || l.to === 'lost' || / → lost → /.test(l.msg))
      .map((l) => `${l.consumer}: ${l.msg}`),
  };
}

describe('an upgrade is quiet', () => {
  const fixture = engineFixtures();

  it("applies nothing again from the previous releases' records, memos and waits", async () => {
    const upgrade = await heldFleet(fixture);
    const { f, queue } = upgrade;
    const thirds = [0, 1, 2].map((n) => f.consumers.filter((_, i) => i % 3 === n).map((c) => c.key));
    const [asVersionOne, asSubDocuments] = [thirds[0]!, thirds[1]!];
    // the records: a third as version 1 kept them, a third as sub-documents, a third as they are
    const client = new MongoClient(sharedBackend('mongodb').url);
    try {
      const records = client.db(f.config.store.database).collection('consumers');
      for (const [keys, form] of [
        [asVersionOne, versionOne],
        [asSubDocuments, subDocuments],
      ] as const) {
        for (const key of keys) {
          const record = readable(decodeRecord(await records.findOne({ _id: key as never })))!;
          await records.replaceOne({ _id: key as never }, form(record));
        }
      }
    } finally {
      await client.close();
    }
    // the queue's Redis: memos naming the revision `epoch`, unsealed as every release before seals wrote them;
    // version 1 knew no memos nor due set
    const redis = new Redis(queue.url);
    try {
      const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
      const memos = await redis.hgetall(keys.memos);
      expect(Object.keys(memos)).toHaveLength(CONSUMERS);
      for (const [key, text] of Object.entries(memos)) {
        const { rev, ...memo } = JSON.parse(text.slice(0, text.lastIndexOf(' ~'))) as { rev: number };
        await redis.hset(keys.memos, key, JSON.stringify({ ...memo, epoch: rev }));
      }
      for (const key of asVersionOne) {
        await redis
          .multi()
          .hdel(keys.memos, key)
          .zrem(keys.due, key)
          .hdel(keys.dueRevs, key)
          .hdel(keys.dueWaits, key)
          .exec();
      }
    } finally {
      redis.disconnect();
    }

    expect(await restarted(upgrade)).toEqual({ setusers: [], moves: [] });
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.filter((c) => c.state === 'held')).toHaveLength(CONSUMERS);
  }, 180_000);

  it('applies nothing again under another fingerprint key, and still applies a rotation', async () => {
    const upgrade = await heldFleet(fixture);
    const { f } = upgrade;
    // what a release started from another directory does: its own key file, made anew
    const key = randomBytes(32);
    f.config = { ...f.config, fingerprintKey: key };

    expect(await restarted(upgrade)).toEqual({ setusers: [], moves: [] });
    expect((await f.status()).healthy).toBe(true);
    // each fingerprint the backend proved is kept: the next checks need not prove it again
    const records = (await f.engines[0]!.store.list()).map((r) => readable(r)!);
    const byKey = new Map(f.consumers.map((c) => [c.key, secretFingerprint(key, c.password)]));
    expect(records.filter((r) => r.machine.context.appliedSecretMac !== byKey.get(r._id))).toEqual([]);

    // a grant secret that does change is still applied, under the new key
    const rotated = f.consumers[7]!;
    const before = { ...rotated };
    rotated.password = randomBytes(18).toString('base64url');
    writeFileSync(rotated.secretPath, `${rotated.password}\n`, { mode: 0o600 });
    await f.until('the rotated secret applied', () => f.canLogin(rotated), 30_000);
    expect(await f.canLogin(before)).toBe(false);
    await f.until('every consumer held', () => f.allHeld(), 30_000);
  }, 180_000);
});
