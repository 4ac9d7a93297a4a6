/**
 * A provider's failed logins within the window: attributed by login to the consumer that claims
 * it, the rest counted to the provider only; forgotten after the window; bounded per consumer.
 */
import { describe, expect, it } from 'vitest';
import type { FailedLogin } from '../../../src/adapters/login-failures.js';
import { FailedLoginTally } from '../../../src/engine/failed-logins-tally.js';
import { FAILED_LOGIN_EVENTS } from '../../../src/queue/coordination.js';
import { failedLoginsSince } from '../../../src/queue/failed-logins-since.js';
import { failedLoginsLines, failedLoginsOf } from '../../../src/status/failed-logins-status.js';

const failure = (login: string, count: number, at: number, address = '10.0.0.7:5000'): FailedLogin => ({
  login,
  address,
  count,
  at,
  node: '127.0.0.1:6379',
});
const owners = new Map([['t_photos', 'cache/photos']]);
const read = (failures: FailedLogin[], lost: string[] = []) => ({ failures, nodes: ['127.0.0.1:6379'], lost });

describe('the failed-logins tally', () => {
  it("attributes by login, counts another login's to the provider only, and groups by host", () => {
    const tally = new FailedLoginTally(60_000);
    const step = tally.add(
      read([
        failure('t_photos', 30, 1_000),
        failure('t_photos', 7, 2_000, '10.0.0.7:5001'),
        failure('admin', 5, 1_000),
      ]),
      owners,
      2_000,
    );
    expect(step).toMatchObject({ attributed: 37, unattributed: 5 });
    const note = tally.note(2_000);
    expect(note.consumers).toEqual([
      { key: 'cache/photos', count: 37, events: [{ at: 2_000, address: '10.0.0.7', count: 37 }] },
    ]);
    expect(note.unattributed).toBe(5);
    expect(failedLoginsLines(failedLoginsOf(note))).toEqual([
      '  turned away: 1 consumer held, whose app fails to log in (the backend refuses the password it uses)',
      '    cache/photos: 37 failed logins from 10.0.0.7 in the last 1m (wrong password), last at 1970-01-01T00:00:02.000Z',
      '  failed logins of logins no consumer claims: 5 in the last 1m',
    ]);
  });

  it('forgets what is older than the window, and keeps a bounded number of events per consumer', () => {
    const tally = new FailedLoginTally(60_000);
    for (let i = 0; i < FAILED_LOGIN_EVENTS + 10; i++)
      tally.add(read([failure('t_photos', 1, 1_000 + i, `10.0.0.${i}:1`)], ['n1']), owners, 1_000 + i);
    expect(tally.note(2_000).consumers[0]!.events).toHaveLength(FAILED_LOGIN_EVENTS);
    expect(tally.note(2_000).lost).toEqual(['n1']);
    const later = tally.note(200_000);
    expect(later.consumers).toEqual([]);
    expect(later.lost).toEqual([]);
  });

  it('answers a rotation: failed logins since a time, and whether "none" can be trusted', async () => {
    const tally = new FailedLoginTally(60_000);
    tally.add(read([failure('t_photos', 2, 10_000), failure('t_photos', 1, 20_000, '10.0.0.9:1')]), owners, 20_000);
    const note = tally.note(20_000);
    const notes = { failedLogins: () => Promise.resolve(new Map([['cache', note]])) };
    expect(await failedLoginsSince(notes, 'cache/photos', 15_000)).toEqual({
      count: 1,
      addresses: ['10.0.0.9'],
      lastAt: 20_000,
      known: true,
    });
    expect((await failedLoginsSince(notes, 'cache/other', 0)).count).toBe(0);
    const none = { failedLogins: () => Promise.resolve(new Map()) };
    expect((await failedLoginsSince(none, 'cache/photos', 0)).known).toBe(false);
  });
});
