/**
 * Jobs added to the queue's Redis by hand (as anyone who can write it, or use Bull Board's add,
 * could): a desired spec not sealed by holdfast is dropped, a spec the provider's policy refuses
 * is refused where it would be applied, and a forged ticket is not used. Counted, said once.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/metrics.js';
import { bullConnection } from '../../../src/queue/bull-connection.js';
import { JobSeal } from '../../../src/queue/job-seal.js';
import type { DesiredSpec } from '../../../src/store/consumer-record.js';
import { encodeMachine } from '../../../src/store/record-codec.js';
import { redisLogin } from '../../backends/logins.js';
import { engineFixtures, readable, type Consumer, type EngineFixture } from '../engine/engine-fixture.js';

const queues: Queue[] = [];
afterAll(() => Promise.all(queues.map((q) => q.close())));

/** The engine's own queue, reached as an intruder would: BullMQ on the same name and prefix. */
function byHand(f: EngineFixture): Queue {
  const queue = new Queue(f.config.queue.name, {
    connection: bullConnection(f.config.queue.connection).connection,
    prefix: f.config.queue.prefix,
  });
  queues.push(queue);
  return queue;
}

function spec(login: string, values: unknown, secretPath: string): DesiredSpec {
  return {
    login,
    values,
    secretPath,
    specHash: randomBytes(32).toString('hex'),
    source: 'added to the queue by hand',
    removed: false,
    problems: [],
  };
}

/** How many jobs the worker's metrics counted as not holdfast's, for `reason`. */
async function rejected(metrics: Metrics, reason: string): Promise<number> {
  const line = (await metrics.text())
    .split('\n')
    .find((l) => l.startsWith(`holdfast_jobs_rejected_total{reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The ACL rules of `login` on the fixture's Redis (null: no such user). */
async function aclOf(f: EngineFixture, login: string): Promise<unknown> {
  const admin = new Redis({
    host: f.provider.host,
    port: f.provider.port,
    username: f.provider.admin.username,
    password: f.provider.admin.password,
  });
  try {
    return await admin.call('ACL', 'GETUSER', login);
  } finally {
    admin.disconnect();
  }
}

/** Whether every job of `ids` was taken by a worker at least once. */
async function processed(queue: Queue, ids: ReadonlyArray<string | undefined>): Promise<boolean> {
  const jobs = await Promise.all(ids.map((id) => Job.fromId(queue, id ?? '')));
  return jobs.every((job) => job?.processedOn !== undefined);
}

const notHoldfasts = (f: EngineFixture) => f.logs.filter((l) => l.msg.includes('was not written by holdfast'));

describe('jobs written into the queue by hand', () => {
  const fixture = engineFixtures();
  const timing = { verifyEvery: '500ms', checkTimeout: '500ms' };

  it('a desired job not sealed by holdfast (or sealed under another key) is dropped, counted and said once: nothing of it applied', async () => {
    const f = await fixture({ consumers: 2, timing });
    const metrics = new Metrics();
    await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const [victim, other] = f.consumers as [Consumer, Consumer];
    const before = await aclOf(f, victim.login);
    const intruder = `t${f.tag}_intruder`;
    const intruderSecret = join(f.dir, 'grants', 'intruder.secret');
    writeFileSync(intruderSecret, `${randomBytes(18).toString('base64url')}\n`);
    const at = Date.now() + 60_000; // newer than anything the sync delivered
    const queue = byHand(f);
    const forged = [
      // a login of its own, within the policy: only the seal keeps it out
      {
        key: 'cache/intruder',
        desired: spec(intruder, { keys: ['intruder:*'], commands: ['+@read'] }, intruderSecret),
      },
      {
        key: 'cache/intruder-all',
        desired: spec(`${intruder}_all`, { keys: ['*'], channels: ['*'], commands: ['+@all'] }, intruderSecret),
      },
      { key: victim.key, desired: spec(victim.login, { keys: ['*'], commands: ['+@all'] }, victim.secretPath) },
    ];
    const ids: Array<string | undefined> = [];
    for (const { key, desired } of forged)
      ids.push((await queue.add(`${key} sync declared`, { key, kind: 'desired', at, desired })).id);
    // another consumer's grant secret, sealed under a key that is not this holdfast's
    const elsewhere = new JobSeal(randomBytes(32));
    const stolen = spec(other.login, { keys: [`${other.id}:*`], commands: ['+@read'] }, victim.secretPath);
    ids.push(
      (
        await queue.add(`${other.key} sync declared`, {
          key: other.key,
          kind: 'desired',
          at,
          desired: stolen,
          seal: elsewhere.desired(other.key, at, stolen),
        })
      ).id,
    );

    await f.until('the four jobs taken by the worker', () => processed(queue, ids));
    await new Promise((r) => setTimeout(r, 1_500)); // a few checks later: nothing more happened
    expect(await aclOf(f, intruder)).toBeNull();
    expect(await aclOf(f, `${intruder}_all`)).toBeNull();
    expect(await aclOf(f, victim.login)).toEqual(before);
    expect(await f.canLogin(victim)).toBe(true);
    expect(await f.canLogin(other)).toBe(true);
    expect(await redisLogin(f.provider, other.login, victim.password)).toBe(false);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.map((c) => c.consumer).sort()).toEqual([victim.key, other.key].sort());
    expect(await rejected(metrics, 'desired-not-sealed')).toBe(4);
    expect(notHoldfasts(f)).toHaveLength(1);
    expect(notHoldfasts(f)[0]!.msg).toContain(
      'its desired spec is not sealed by holdfast: dropped, nothing of it applied',
    );
  });

  it('a sealed spec its provider refuses (as if the loader had missed it) is refused where it is applied: APPLY_REFUSED naming its source, said once, red', async () => {
    const f = await fixture({ consumers: 2, timing });
    await f.startHeld();
    const [victim, other] = f.consumers as [Consumer, Consumer];
    const before = await aclOf(f, victim.login);
    const seal = new JobSeal(f.config.fingerprintKey);
    const at = Date.now() + 60_000;
    const queue = byHand(f);
    const refused = [
      {
        key: victim.key,
        desired: spec(victim.login, { keys: [`${victim.id}:*`], channels: [], commands: ['+@all'] }, victim.secretPath),
      },
      {
        key: other.key,
        desired: spec(other.login, { keys: [`${other.id}:*`], channels: [], commands: ['+@read'] }, '/etc/passwd'),
      },
    ];
    const ids: Array<string | undefined> = [];
    for (const { key, desired } of refused)
      ids.push(
        (
          await queue.add(`${key} sync declared`, {
            key,
            kind: 'desired',
            at,
            desired,
            seal: seal.desired(key, at, desired),
          })
        ).id,
      );

    await f.until('both jobs taken by the worker', () => processed(queue, ids));
    await new Promise((r) => setTimeout(r, 1_500));
    const status = await f.status();
    expect(status.healthy).toBe(false);
    const [asVictim, asOther] = [victim, other].map((c) => status.consumers.find((s) => s.consumer === c.key)!);
    expect([asVictim, asOther].map((c) => [c!.state, c!.reason])).toEqual([
      ['applyRefused', expect.any(String)],
      ['applyRefused', expect.any(String)],
    ]);
    expect(asVictim!.reason).toContain(
      "the spec declared at added to the queue by hand is not what provider cache's configuration gives, so nothing was sent: " +
        'values.commands[0]: "+@all" is not among the commands allowed by the provider\'s policy',
    );
    expect(asOther!.reason).toContain(
      'secret: "/etc/passwd" leaves the contributions file\'s directory or the provider\'s secretsRoot',
    );
    for (const c of [victim, other])
      expect(f.logsFor(c).filter((l) => l.msg.startsWith('apply refused'))).toHaveLength(1);
    expect(await aclOf(f, victim.login)).toEqual(before);
    expect(await f.canLogin(victim)).toBe(true);
    expect(await f.canLogin(other)).toBe(true);
  });

  it('a wait job whose ticket is not sealed does not use its ticket: no other login or path is tried, the record is checked', async () => {
    const f = await fixture({ consumers: 2, timing });
    const metrics = new Metrics();
    const engine = await f.start(undefined, undefined, { metrics });
    await f.until('every consumer settled', () => f.settled());
    const [victim] = f.consumers as [Consumer];
    const record = readable(await engine.store.get(victim.key))!;
    const forgedPath = join(f.dir, 'grants', 'forged-ticket-path.secret');
    const ticket = {
      machine: encodeMachine(record.machine),
      spec: {
        login: 'default',
        values: record.desired.values,
        secretPath: forgedPath,
        specHash: record.desired.specHash,
      },
      appliedAt: record.appliedAt?.getTime() ?? null,
    };
    const queue = byHand(f);
    const job = await queue.add(`${victim.key} wait verify`, {
      key: victim.key,
      kind: 'wait',
      rev: record.rev,
      wait: 'verify',
      ticket,
      seal: 'x'.repeat(43),
    });

    await f.until('the job taken by the worker', () => processed(queue, [job.id]));
    await new Promise((r) => setTimeout(r, 1_500));
    // had it been used, the check would have read the forged path (missing: a wait for the secret)
    expect(f.rawLog.filter((l) => l.includes(forgedPath))).toEqual([]);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.find((c) => c.consumer === victim.key)?.state).toBe('held');
    expect(await f.canLogin(victim)).toBe(true);
    // run again with every wait (from the record), counted each time, said once
    expect(await rejected(metrics, 'ticket-not-sealed')).toBeGreaterThanOrEqual(1);
    expect(notHoldfasts(f)).toHaveLength(1);
    expect(notHoldfasts(f)[0]!.msg).toContain(
      "its ticket is not sealed by holdfast: not used, the consumer's record is read instead",
    );
  });

  it('a command job may carry only what a command sends: a REMOVE or a DESIRED by hand, or a job naming no consumer, is dropped, counted and said once', async () => {
    const f = await fixture({ consumers: 2, timing });
    const metrics = new Metrics();
    await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const [victim] = f.consumers as [Consumer];
    const queue = byHand(f);
    const ids = [
      (await queue.add(`${victim.key} command remove`, { key: victim.key, kind: 'command', event: { type: 'REMOVE' } }))
        .id,
      (
        await queue.add(`${victim.key} command desired`, {
          key: victim.key,
          kind: 'command',
          event: { type: 'DESIRED', specHash: 'f'.repeat(64) },
        })
      ).id,
      (await queue.add('no consumer', { key: 42, kind: 'command', event: { type: 'CHECK_NOW' } })).id,
    ];

    await f.until('the jobs taken by the worker', () => processed(queue, ids));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await f.canLogin(victim)).toBe(true);
    const status = await f.status();
    expect(status.healthy).toBe(true);
    expect(status.consumers.map((c) => c.state)).toEqual(['held', 'held']);
    expect(await rejected(metrics, 'not-a-holdfast-job')).toBe(3);
    expect(notHoldfasts(f)).toHaveLength(1);
    expect(notHoldfasts(f)[0]!.msg).toContain('it asks for an event no command sends ("REMOVE"): dropped');
  });
});
