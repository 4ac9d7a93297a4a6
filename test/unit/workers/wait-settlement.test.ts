/**
 * One rule settles a wait's run, whichever way it ran: due again with the record's ticket when
 * the record was read, with its own ticket and seal otherwise (never sealed anew), done with for
 * anything but "later".
 */
import { describe, expect, it } from 'vitest';
import type { CheckTicket, ScheduledWait } from '../../../src/schedule/consumer-queue.js';
import { again, retryLater } from '../../../workers/job-outcome.js';
import type { WaitJob } from '../../../workers/wait-job.js';
import { settleWait } from '../../../workers/wait-settlement.js';

const own = {
  machine: 'own',
  spec: { login: 'app', values: {}, secretPath: '/s', specHash: 'h' },
  appliedAt: null,
} as unknown as CheckTicket;
const record = { ...own, machine: 'record' } as unknown as CheckTicket;
const job: WaitJob = { key: 'cache/a', kind: 'wait', rev: 4, wait: 'verify', ticket: own, seal: 'the-seal' };

function due() {
  const scheduled: Array<ScheduledWait & { seal?: string }> = [];
  return {
    scheduled,
    scheduleWaits: (list: ReadonlyArray<ScheduledWait & { seal?: string }>) =>
      Promise.resolve(void scheduled.push(...list)),
  };
}

describe('a wait settled', () => {
  const at = new Date(Date.now() + 60_000);

  it("is due again at its outcome's time; in the due set already, only a ticket read from the record is written", async () => {
    const d = due();
    expect(await settleWait(job, again(at), d, true)).toBe(at.getTime());
    expect(d.scheduled).toEqual([]);
    expect(await settleWait(job, again(at, record), d, true)).toBe(at.getTime());
    expect(d.scheduled).toEqual([{ key: 'cache/a', timer: { wait: 'verify', rev: 4, dueAt: at }, ticket: record }]);
  });

  it("as a wait job, joins the due set: with the record's ticket sealed anew, or its own with its own seal", async () => {
    const d = due();
    const busy = retryLater('busy', new Date());
    await settleWait(job, busy, d, false);
    await settleWait(job, again(at, record), d, false);
    expect(d.scheduled).toEqual([
      {
        key: 'cache/a',
        timer: { wait: 'verify', rev: 4, dueAt: busy.kind === 'later' ? busy.at : at },
        ticket: own,
        seal: 'the-seal',
      },
      { key: 'cache/a', timer: { wait: 'verify', rev: 4, dueAt: at }, ticket: record },
    ]);
  });

  it('is done with for any outcome but later', async () => {
    const d = due();
    for (const kind of ['done', 'stale', 'absent', 'unknown-provider', 'rejected'] as const)
      expect(await settleWait(job, { kind }, d, false)).toBeNull();
    expect(d.scheduled).toEqual([]);
  });
});
