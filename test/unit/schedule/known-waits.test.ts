/**
 * A wait known again by its stored text (`src/schedule/known-waits.ts`) and a ticket's seal checked once per distinct
 * sealed ticket (`workers/job-trust.ts`): what a writer of the queue's Redis changes in a wait's text is read and
 * judged again, whatever was known of that consumer's wait before.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { JobSeal } from '../../../src/queue/job-seal.js';
import type { TakenEntry } from '../../../src/queue/coordination.js';
import type { CheckTicket } from '../../../src/schedule/consumer-queue.js';
import { takenWait } from '../../../src/schedule/due-waits.js';
import { KnownWaits } from '../../../src/schedule/known-waits.js';
import { JobTrust } from '../../../workers/job-trust.js';

const seal = new JobSeal(Buffer.alloc(32, 7));
const key = 'cache/photos';
const ticket = (login: string): CheckTicket => ({
  machine: { version: 2, state: 'held', context: { key } } as unknown as CheckTicket['machine'],
  spec: { login, values: { keys: ['photos:*'] }, secretPath: '/run/secrets/photos', specHash: 'h1' },
  appliedAt: 1,
});
const entry = (t: CheckTicket, withSeal = seal.ticket(key, 3, 'verify', t)): TakenEntry => ({
  key,
  rev: '3',
  dueAt: 0,
  text: JSON.stringify({ wait: 'verify', ticket: t, seal: withSeal }),
});

/** A round's reading of `taken`: the known job when its text is the same, else read (and known). */
function read(known: KnownWaits, taken: TakenEntry) {
  return known.get(taken) ?? known.set(taken, takenWait(taken).job);
}

describe('a wait known again', () => {
  it('is the same frozen job for the same revision and text, and read anew for any other', () => {
    const known = new KnownWaits();
    const first = read(known, entry(ticket('app_photos')));
    expect(Object.isFrozen(first.ticket.spec.values)).toBe(true);
    expect(read(known, entry(ticket('app_photos')))).toBe(first);
    expect(known.get({ ...entry(ticket('app_photos')), rev: '4' })).toBeUndefined();
    expect(known.get(entry(ticket('app_other')))).toBeUndefined();
  });

  it('does not trust a ticket changed by hand under the seal of the one known before', () => {
    const known = new KnownWaits();
    const trust = new JobTrust(seal, pino({ level: 'silent' }));
    const good = entry(ticket('app_photos'));
    expect(trust.judge(read(known, good))).toBe('whole');
    expect(trust.judge(read(known, good))).toBe('whole');
    // the same seal on another login: what a writer of the queue's Redis could try
    const forged = entry(ticket('app_admin'), seal.ticket(key, 3, 'verify', ticket('app_photos')));
    const job = read(known, forged);
    expect(job.ticket.spec.login).toBe('app_admin');
    expect(trust.judge(job)).toBe('not-its-ticket');
  });

  it('checks the seal again of a job that is not frozen: what is judged may have changed since', () => {
    const trust = new JobTrust(seal, pino({ level: 'silent' }));
    const job = takenWait(entry(ticket('app_photos'))).job;
    expect(trust.judge(job)).toBe('whole');
    job.ticket.spec.login = 'app_admin';
    expect(trust.judge(job)).toBe('not-its-ticket');
  });

  it('keeps at most its bound, and a consumer known already is kept up to date when full', () => {
    const known = new KnownWaits(1);
    const taken = entry(ticket('app_photos'));
    read(known, taken);
    const other = { ...taken, key: 'cache/other' };
    read(known, other);
    expect(known.size).toBe(1);
    expect(known.get(other)).toBeUndefined();
    const changed = entry(ticket('app_photos2'));
    const job = read(known, changed);
    expect(known.get(changed)).toBe(job);
  });
});
