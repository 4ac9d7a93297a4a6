import { describe, expect, it } from 'vitest';
import { JobSeal } from '../../../src/queue/job-seal.js';
import type { DesiredSpec } from '../../../src/store/consumer-record.js';

const seal = new JobSeal(Buffer.alloc(32, 1));
const spec: DesiredSpec = {
  login: 'app_photos',
  values: { keys: ['photos:*'], channels: [], commands: ['+@read'] },
  secretPath: '/srv/grants/photos.secret',
  specHash: 'a'.repeat(64),
  source: '/srv/contributions/cache.yaml:2',
  removed: false,
  problems: [],
};
/** A job as a worker gets it: through JSON, as BullMQ stores it. */
const carried = <T>(data: T): T => JSON.parse(JSON.stringify(data)) as T;

describe('JobSeal', () => {
  it('seals a desired job so that a worker with the same fingerprint key opens it after the trip through the queue', () => {
    const job = carried({ key: 'cache/photos', at: 17, desired: spec, seal: seal.desired('cache/photos', 17, spec) });
    expect(seal.sealsDesired(job)).toBe(true);
    expect(new JobSeal(Buffer.alloc(32, 1)).sealsDesired(job)).toBe(true);
    // the same fields in another order are the same spec
    expect(seal.sealsDesired({ ...job, desired: { ...carried({ problems: [], removed: false }), ...spec } })).toBe(
      true,
    );
  });

  it('refuses a desired job changed in any way, moved to another consumer or time, unsealed, or sealed under another key', () => {
    const job = carried({ key: 'cache/photos', at: 17, desired: spec, seal: seal.desired('cache/photos', 17, spec) });
    expect(seal.sealsDesired({ ...job, desired: { ...spec, values: { keys: ['*'], commands: ['+@all'] } } })).toBe(
      false,
    );
    expect(seal.sealsDesired({ ...job, desired: { ...spec, secretPath: '/srv/grants/billing.secret' } })).toBe(false);
    expect(seal.sealsDesired({ ...job, key: 'cache/search' })).toBe(false);
    expect(seal.sealsDesired({ ...job, at: 18 })).toBe(false);
    expect(seal.sealsDesired({ ...job, desired: null })).toBe(false);
    expect(seal.sealsDesired({ key: job.key, at: job.at, desired: spec })).toBe(false);
    expect(seal.sealsDesired({ ...job, seal: 42 })).toBe(false);
    expect(new JobSeal(Buffer.alloc(32, 2)).sealsDesired(job)).toBe(false);
  });

  it('seals a ticket bound to its consumer, revision and wait', () => {
    const ticket = {
      machine: { version: 2, state: 'held', context: { key: 'cache/photos', reason: null } },
      spec,
      appliedAt: 5,
    };
    const job = carried({
      key: 'cache/photos',
      rev: 3,
      wait: 'verify' as const,
      ticket,
      seal: seal.ticket('cache/photos', 3, 'verify', ticket),
    });
    expect(seal.sealsTicket(job)).toBe(true);
    expect(seal.sealsTicket({ ...job, rev: 4 })).toBe(false);
    expect(seal.sealsTicket({ ...job, wait: 'brake' })).toBe(false);
    expect(seal.sealsTicket({ ...job, key: 'cache/search' })).toBe(false);
    expect(seal.sealsTicket({ ...job, ticket: { ...job.ticket, spec: { ...spec, login: 'default' } } })).toBe(false);
  });

  it('opens a ticket the previous release sealed (a wait job it queued is run on its ticket after an upgrade)', () => {
    const ticket = {
      machine: { version: 2, state: 'held', context: { key: 'cache/photos', reason: null } },
      spec,
      appliedAt: 5,
    };
    // made by the previous release's JobSeal (before the wait job's kind was renamed) under the same key
    const previous = 'QFBTRIyK4yy-_MefNrU2P3Yqd2AMkijM1tL_U7wZME4';
    expect(seal.ticket('cache/photos', 3, 'verify', ticket)).toBe(previous);
  });
});
