/**
 * What the previous release wrote under names this one renamed is read and run after an upgrade, on the real store
 * (FerretDB where no Docker runs) and the real queue: a record left mid-check, its history naming the former state,
 * is checked and healed; a wait job the previous release queued, its ticket sealed then, is run on that ticket.
 * The former names: `verifying` (the former name of the state `checking`) and `timer` (the former kind of a wait job).
 * Each line naming a former spelling says so: the rename script leaves such lines alone.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { MongoClient, type Document } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { bullConnection } from '../../../src/queue/bull-connection.js';
import { JobSeal } from '../../../src/queue/job-seal.js';
import { checkTicket } from '../../../src/schedule/consumer-queue.js';
import { ownBackend, sharedBackend } from '../../backends/index.js';
import { engineFixtures, readable, type Consumer } from './engine-fixture.js';

const FORMER_STATE = 'verifying'; // the former name of `checking`
const FORMER_KIND = 'timer'; // the former kind of a wait job

const queues: Queue[] = [];
afterAll(() => Promise.all(queues.map((q) => q.close())));

async function dropLogin(login: string): Promise<void> {
  const admin = new Redis(sharedBackend('redis').url);
  await admin.call('ACL', 'DELUSER', login);
  admin.disconnect();
}

/** How many jobs the worker's metrics counted as not holdfast's, whatever the reason. */
async function rejected(metrics: Metrics): Promise<number> {
  return (await metrics.text())
    .split('\n')
    .filter((l) => l.startsWith('holdfast_jobs_rejected_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('names the previous release wrote', () => {
  const fixture = engineFixtures();

  it('a record it left mid-check (its machine and history naming the former state) is checked, healed and written in the names of now', async () => {
    const queue = await ownBackend('redis');
    const f = await fixture({ queue, consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    await f.startHeld();
    const victim = f.consumers[0]!;
    await f.engines[0]!.stop();
    f.engines.splice(0);
    const client = new MongoClient(sharedBackend('mongodb').url);
    const records = client.db(f.config.store.database).collection<Document>('consumers');
    try {
      const raw = (await records.findOne({ _id: victim.key as never }))!;
      const machine = JSON.parse(raw.machine as string) as { context: unknown };
      const at = Date.now() - 60_000;
      const history = [
        ...(JSON.parse(raw.history as string) as unknown[]),
        [at, 'held', FORMER_STATE, null, 'check'], // a former state, as the previous release wrote it
      ];
      await records.replaceOne(
        { _id: victim.key as never },
        {
          ...raw,
          rev: (raw.rev as number) + 1,
          machine: JSON.stringify({ version: 2, state: FORMER_STATE, context: machine.context }), // the former name
          history: JSON.stringify(history),
          stateSince: new Date(at),
          effectUntil: null,
          timer: null,
        },
      );
    } finally {
      await client.close();
    }
    const flush = new Redis(queue.url);
    await flush.flushall(); // as a stopped release leaves the queue: only the record says what comes next
    flush.disconnect();
    await dropLogin(victim.login);

    await f.start();
    await f.until('the victim healed', async () => (await f.canLogin(victim)) && (await f.allHeld()), 30_000);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.find((c) => c.consumer === victim.key)?.state).toBe('held');
    const record = readable(await f.engines[0]!.store.get(victim.key))!;
    const transitions = record.history.map((h) => `${h.from} → ${h.to}`);
    // the entry the previous release wrote, read as `checking`; then the check it was left in, done again
    expect(transitions).toEqual(expect.arrayContaining(['held → checking', 'checking → lost', 'lost → held']));
    // and what is stored now says nothing in the former names
    const after = new MongoClient(sharedBackend('mongodb').url);
    try {
      const stored = (await after
        .db(f.config.store.database)
        .collection<Document>('consumers')
        .findOne({
          _id: victim.key as never,
        }))!;
      expect(JSON.parse(stored.machine as string)).toMatchObject({ version: 3, state: 'held' });
      expect(JSON.stringify(stored)).not.toContain(FORMER_STATE);
    } finally {
      await after.close();
    }
  });

  it('a wait job it queued (the former kind, its ticket sealed then) is run on its ticket: the login healed, nothing rejected', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1h', checkTimeout: '500ms' } });
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const [victim] = f.consumers as [Consumer];
    const record = readable(await engine.store.get(victim.key))!;
    if (!record.timer) throw new Error('no wait to hand over');
    const now = checkTicket(record.machine, record.desired, record.appliedAt);
    const ticket = { ...now, machine: { ...now.machine, version: 2 } }; // the machine version the former release wrote
    const { rev, wait } = record.timer;
    const byHand = new Queue(f.config.queue.name, {
      connection: bullConnection(f.config.queue.connection).connection,
      prefix: f.config.queue.prefix,
    });
    queues.push(byHand);
    await dropLogin(victim.login);
    // with a wait of an hour, nothing but this job checks the victim
    await byHand.add(`${victim.key} ${FORMER_KIND} ${wait}`, {
      key: victim.key,
      kind: FORMER_KIND,
      rev,
      wait,
      ticket,
      seal: new JobSeal(f.config.fingerprintKey).ticket(victim.key, rev, wait, ticket),
    });

    await f.until('the victim healed by the job', () => f.canLogin(victim), 30_000);
    expect(await rejected(metrics)).toBe(0);
    expect(f.logs.filter((l) => l.msg.includes('was not written by holdfast'))).toEqual([]);
    await f.until('every consumer held', () => f.allHeld());
  });
});
