/**
 * A round's take of the due set tells each wait's data by its digest (`takeDigests`), not its text, and a wait read
 * before is known again by it (`src/schedule/known-waits.ts`), on a real Redis of this file's own: the known wait is the
 * same frozen job, its text neither sent nor read again; a text changed in the queue's Redis, by hand under the seal of
 * the one known or by holdfast at the same revision, is read and judged anew, never taken as the old one.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownBackend, type OwnedBackend } from '../../backends/index.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { JobSeal } from '../../../src/queue/job-seal.js';
import type { CheckTicket } from '../../../src/schedule/consumer-queue.js';
import { DueWaits } from '../../../src/schedule/due-waits.js';
import { JobTrust } from '../../../workers/job-trust.js';

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

const seal = new JobSeal(randomBytes(32));
const key = 'cache/photos';
const ticket = (login: string): CheckTicket => ({
  machine: { version: 2, state: 'held', context: { key } } as unknown as CheckTicket['machine'],
  spec: { login, values: { keys: ['photos:*'] }, secretPath: '/run/secrets/photos', specHash: 'h1' },
  appliedAt: 1,
});

function fresh() {
  const prefix = `{digest-${randomBytes(4).toString('hex')}}`;
  const due = new DueWaits(redis, { prefix, shards: 1 }, seal);
  const keys = coordinationKeys(holdfastPrefix(prefix));
  const trust = new JobTrust(seal, pino({ level: 'silent' }));
  /** The consumer's wait scheduled at revision 3, due now. */
  const schedule = (t: CheckTicket) =>
    due.scheduleWaits([{ key, timer: { wait: 'verify', rev: 3, dueAt: new Date(Date.now() - 1) }, ticket: t }]);
  /** One take of the due set, and its wait put back due at once. */
  const take = async () => {
    const now = Date.now();
    const { taken } = await due.take(0, now, now + 30_000, 10);
    expect(taken.map((t) => t.key)).toEqual([key]);
    await due.settle(0, [{ key, rev: taken[0]!.rev, at: now - 1 }]);
    return taken[0]!.job;
  };
  return { due, keys, trust, schedule, take };
}

/** How many times the server read a hash's fields (`HMGET`, inside scripts too) since the counts were reset. */
async function hmgets(): Promise<number> {
  const line = (await admin.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_hmget:'));
  return Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0);
}

describe('a wait taken by its digest', () => {
  it('is known again without its text: the same frozen job, trusted, nothing read but the take', async () => {
    const { trust, schedule, take } = fresh();
    await schedule(ticket('app_photos'));
    await admin.config('RESETSTAT');
    const first = await take();
    expect(trust.judge(first)).toBe('whole');
    // the take script's two (revisions, data as digests), the settle script's one, and the text read after the take
    expect(await hmgets()).toBe(4);
    await admin.config('RESETSTAT');
    const again = await take();
    expect(again).toBe(first);
    expect(Object.isFrozen(again.ticket.spec)).toBe(true);
    expect(trust.judge(again)).toBe('whole');
    expect(await hmgets()).toBe(3); // no text read
  });

  it('reads a text changed by hand under the seal of the one known, and does not trust it', async () => {
    const { keys, trust, schedule, take } = fresh();
    await schedule(ticket('app_photos'));
    expect(trust.judge(await take())).toBe('whole');
    // another login under the known ticket's seal: what a writer of the queue's Redis could try
    const forged = {
      wait: 'verify',
      ticket: ticket('app_admin'),
      seal: seal.ticket(key, 3, 'verify', ticket('app_photos')),
    };
    await admin.hset(keys.dueWaits, key, JSON.stringify(forged));
    const job = await take();
    expect(job.ticket.spec.login).toBe('app_admin');
    expect(trust.judge(job)).toBe('not-its-ticket');
  });

  it('reads a ticket holdfast changed at the same revision, and trusts it', async () => {
    const { trust, schedule, take } = fresh();
    await schedule(ticket('app_photos'));
    const first = await take();
    await schedule(ticket('app_photos_2')); // the same revision: its data only
    const job = await take();
    expect(job).not.toBe(first);
    expect(job.ticket.spec.login).toBe('app_photos_2');
    expect(trust.judge(job)).toBe('whole');
  });
});
