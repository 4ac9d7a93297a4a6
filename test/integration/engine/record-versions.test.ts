/**
 * Records an earlier holdfast wrote, and records this one cannot read. A version-1 record (the
 * shape written before machine versions: XState's whole snapshot, `applied`, a timer naming
 * XState's event) is carried on from where it was left: mid-apply, mid-removal, between checks.
 * A record this holdfast cannot read (a newer version's, or damaged) is reported red, naming
 * the consumer and why, is left as it is, and slows nothing else.
 *
 * Each test stops the engine, rewrites records straight in the store and flushes the queue's
 * Redis, as an upgrade leaves it: only the records say what comes next, so only the sweep can
 * find it.
 */
import { Redis } from 'ioredis';
import { MongoClient, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MACHINE_VERSION } from '../../../machines/machine-step.js';
import type { ConsumerRecord } from '../../../src/store/consumer-record.js';
import { decodeRecord, encodeDesired, encodeMachine } from '../../../src/store/record-codec.js';
import { redReasons } from '../../../src/status/status-report.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';

const PAST = () => new Date(Date.now() - 60_000);

/** A record this version wrote, with its parts as sub-documents, as versions before 3 stored them. */
function nested(raw: Document): Document {
  const record = decodeRecord(raw) as ConsumerRecord;
  return { ...record, machine: encodeMachine(record.machine), desired: encodeDesired(record.desired) };
}

/** A record as holdfast wrote it before machine versions, in `state`, from one this version wrote. */
function versionOne(
  raw: Document,
  state: string,
  fields: { effectUntil: Date | null; timer: Document | null },
): Document {
  const { machine, appliedAt, desiredAt: _desiredAt, refused: _refused, ...kept } = raw;
  const context = (machine as { context: Record<string, unknown> }).context;
  return {
    ...kept,
    snapshot: { status: 'active', value: state, historyValue: {}, context, children: {} },
    state,
    dirty: false,
    desiredRev: 1,
    applied: appliedAt
      ? {
          specHash: (raw.desired as { specHash: string }).specHash,
          secretMac: context.appliedSecretMac,
          at: appliedAt as Date,
        }
      : null,
    nextDueAt: fields.effectUntil ?? (fields.timer?.dueAt as Date | undefined) ?? null,
    rev: (raw.rev as number) + 1,
    ...fields,
  };
}

/** Stops the fixture's engine, lets `rewrite` change raw records, and flushes the queue's Redis. */
async function rewriteStopped(
  f: EngineFixture,
  queueUrl: string,
  rewrite: (records: ReturnType<MongoClient['db']>) => Promise<void>,
): Promise<void> {
  await f.engines[0]!.stop();
  f.engines.splice(0);
  const client = new MongoClient(sharedBackend('mongodb').url);
  try {
    await rewrite(client.db(f.config.store.database));
  } finally {
    await client.close();
  }
  const queue = new Redis(queueUrl);
  await queue.flushall();
  queue.disconnect();
}

async function dropLogin(login: string): Promise<void> {
  const admin = new Redis(sharedBackend('redis').url);
  await admin.call('ACL', 'DELUSER', login);
  admin.disconnect();
}

describe('records of other versions', () => {
  const fixture = engineFixtures();
  const timing = { verifyEvery: '1s', checkTimeout: '500ms' };

  it('applies again a version-1 record a dead worker left mid-apply', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({ queue, consumers: 2, timing, sentinelEvery: '1s' });
    await f.startHeld();
    const victim = f.consumers[0]!;
    await rewriteStopped(f, queue.url, async (db) => {
      const raw = nested((await db.collection('consumers').findOne({ _id: victim.key as never }))!);
      await db
        .collection('consumers')
        .replaceOne({ _id: victim.key as never }, versionOne(raw, 'applying', { effectUntil: PAST(), timer: null }));
    });
    await dropLogin(victim.login);

    await f.start();
    await f.until('the victim applied again', async () => (await f.canLogin(victim)) && (await f.allHeld()), 30_000);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.find((c) => c.consumer === victim.key)?.state).toBe('held');
  });

  it('removes a version-1 record a dead worker left mid-removal', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({ queue, consumers: 2, timing, sentinelEvery: '1s' });
    await f.startHeld();
    const [victim, kept] = [f.consumers[0]!, f.consumers[1]!];
    f.writeContributions([kept]);
    await rewriteStopped(f, queue.url, async (db) => {
      const raw = nested((await db.collection('consumers').findOne({ _id: victim.key as never }))!);
      const removing = versionOne(raw, 'removing', { effectUntil: PAST(), timer: null });
      await db
        .collection('consumers')
        .replaceOne(
          { _id: victim.key as never },
          { ...removing, desired: { ...(raw.desired as Document), removed: true } },
        );
    });
    expect(await f.canLogin(victim)).toBe(true);

    await f.start();
    await f.until(
      'the victim removed',
      async () => !(await f.canLogin(victim)) && (await f.status()).consumers.every((c) => c.consumer !== victim.key),
      30_000,
    );
    expect(await f.engines[0]!.store.get(victim.key)).toBeNull();
    expect(await f.canLogin(kept)).toBe(true);
  });

  it('checks a version-1 record between checks on its version-1 wait, and heals it', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({ queue, consumers: 2, timing, sentinelEvery: '1s' });
    await f.startHeld();
    const victim = f.consumers[0]!;
    await rewriteStopped(f, queue.url, async (db) => {
      const raw = nested((await db.collection('consumers').findOne({ _id: victim.key as never }))!);
      const timer = { epoch: (raw.rev as number) + 1, event: 'xstate.after.verify.consumer.held', dueAt: PAST() };
      await db
        .collection('consumers')
        .replaceOne({ _id: victim.key as never }, versionOne(raw, 'held', { effectUntil: null, timer }));
    });
    await dropLogin(victim.login);

    await f.start();
    await f.until('the dropped login healed', () => f.canLogin(victim), 30_000);
    const restarted = Date.now();
    await f.until('the victim checked again', async () => {
      const c = (await f.status()).consumers.find((s) => s.consumer === victim.key);
      return c?.state === 'held' && c.lastCheck !== null && Date.parse(c.lastCheck.at) > restarted;
    });
  });

  it('reports a record it cannot read, leaves it as it is, and serves the others', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({ queue, consumers: 4, timing, sentinelEvery: '1s' });
    await f.startHeld();
    const [newer, damaged, other] = [f.consumers[0]!, f.consumers[1]!, f.consumers[2]!];
    const written: Document[] = [];
    await rewriteStopped(f, queue.url, async (db) => {
      const raw = (await db.collection('consumers').findOne({ _id: newer.key as never }))!;
      written.push({ ...raw, machine: { version: 99, phase: 'steady', context: {} }, rev: (raw.rev as number) + 1 });
      written.push({ _id: damaged.key, provider: 'cache', consumerId: damaged.id, rev: 4, desired: 42 });
      for (const doc of written) await db.collection('consumers').replaceOne({ _id: doc._id as never }, doc);
    });
    await dropLogin(other.login);

    await f.start();
    await f.until('the others served', () => f.canLogin(other), 30_000);
    await f.until(
      'both reported',
      async () => (await f.status()).consumers.filter((c) => c.state === 'unreadable').length === 2,
      30_000,
    );
    const status = await f.status();
    expect(status.healthy).toBe(false);
    const shown = new Map(status.consumers.map((c) => [c.consumer, c]));
    expect(shown.get(newer.key)).toMatchObject({
      state: 'unreadable',
      healthy: false,
      reason: expect.stringContaining('written by machine version 99;') as unknown,
    });
    expect(shown.get(damaged.key)).toMatchObject({
      state: 'unreadable',
      healthy: false,
      reason: 'unreadable: its desired spec is not a document',
    });
    expect(shown.get(other.key)?.state).toBe('held');
    expect(shown.get(f.consumers[3]!.key)?.state).toBe('held');
    // the lines `holdfast status` prints when red
    expect(redReasons(status)).toEqual(
      expect.arrayContaining([
        `${newer.key}: unreadable: written by machine version 99; this holdfast reads versions 1 to ${MACHINE_VERSION}`,
        `${damaged.key}: unreadable: its desired spec is not a document`,
      ]),
    );
    // said once each, however many sweeps read it
    await f.engines[0]!.sweeper!.sweep();
    for (const c of [newer, damaged])
      expect(f.logs.filter((l) => l.msg.startsWith(`the record of ${c.key} cannot be read`))).toHaveLength(1);

    // a job that meets them writes nothing over them
    const client = new MongoClient(sharedBackend('mongodb').url);
    const now = await client
      .db(f.config.store.database)
      .collection('consumers')
      .find({ _id: { $in: [newer.key, damaged.key] as never[] } })
      .toArray();
    await client.close();
    expect(now.sort((a, b) => (String(a._id) < String(b._id) ? -1 : 1))).toEqual(written);
  });
});
