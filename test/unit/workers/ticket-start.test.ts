/**
 * Where a routine check on its ticket starts (`workers/ticket-start.ts`): for a frozen wait job, worked out once and
 * reused; what the chart answers is what stepping it gives, a plain `HELD` and a `HELD` that says a fingerprint kept
 * apart; a job not frozen is worked out each time.
 */
import { describe, expect, it } from 'vitest';
import type { ConsumerEvent } from '../../../machines/consumer-events.js';
import { createConsumerMachine } from '../../../machines/consumer-machine.js';
import { firstSnapshot, persist, restore, step, waitEnded } from '../../../machines/machine-step.js';
import { keepStep } from '../../../machines/step-memo.js';
import { checkTicket } from '../../../src/schedule/consumer-queue.js';
import { deepFreeze } from '../../../src/text/deep-freeze.js';
import { foundAnswer, ticketStart } from '../../../workers/ticket-start.js';
import type { WaitJob } from '../../../workers/wait-job.js';

const machine = createConsumerMachine({
  verifyEveryMs: 60_000,
  brakeMaxMs: 3_600_000,
  retryBaseMs: 1000,
  jitter: 0.1,
  secretGraceMs: 60_000,
});
const key = 'cache/photos';

/** A held consumer's wait job, its chart's answers to a routine check kept (as an earlier check keeps them). */
function heldJob(): WaitJob {
  let snapshot = firstSnapshot(machine, key);
  for (const event of [
    { type: 'DESIRED', specHash: 'spec-1' },
    { type: 'APPLIED', specHash: 'spec-1', secretMac: 'mac-1' },
  ] as ConsumerEvent[])
    snapshot = step(machine, snapshot, event).snapshot;
  const from = persist(snapshot);
  const waitEnd = waitEnded('verify', from.state);
  const ended = step(machine, restore(machine, from), waitEnd);
  keepStep(machine, from, waitEnd, ended);
  for (const found of [{ type: 'HELD' }, { type: 'HELD', secretMac: 'mac-2' }] as ConsumerEvent[])
    keepStep(machine, persist(ended.snapshot), found, step(machine, ended.snapshot, found));
  const spec = { login: 'app_photos', values: {}, secretPath: '/run/secrets/photos', specHash: 'spec-1' };
  const ticket = JSON.parse(JSON.stringify(checkTicket(from, spec, null))) as WaitJob['ticket'];
  return { key, kind: 'wait', rev: 3, wait: 'verify', ticket, seal: 'sealed' };
}

/** The chart stepped for real from `job`'s ticket through its wait's end and `found`: the consumer it rests as. */
function stepped(job: WaitJob, found: ConsumerEvent) {
  const start = ticketStart(machine, job)!;
  const ended = step(machine, restore(machine, start.from), start.waitEnd);
  return persist(step(machine, ended.snapshot, found).snapshot);
}

describe('a routine check on a frozen wait job', () => {
  it('starts from what was worked out for the same job before', () => {
    const job = deepFreeze(heldJob());
    const start = ticketStart(machine, job)!;
    expect(start.ending?.effect).toBe('check');
    expect(ticketStart(machine, job)).toBe(start);
    const other = heldJob();
    expect(ticketStart(machine, other)).not.toBe(ticketStart(machine, other));
  });

  it("gives the chart's answer to a plain HELD again, and to a HELD that learned a fingerprint, not the plain one's", () => {
    const job = deepFreeze(heldJob());
    const start = ticketStart(machine, job)!;
    const plain: ConsumerEvent = { type: 'HELD' };
    const learned: ConsumerEvent = { type: 'HELD', secretMac: 'mac-2' };
    const first = foundAnswer(machine, start, plain)!;
    expect(foundAnswer(machine, start, plain)).toBe(first);
    expect(first.consumer).toStrictEqual(stepped(job, plain));
    expect(foundAnswer(machine, start, learned)!.consumer).toStrictEqual(stepped(job, learned));
    expect(stepped(job, learned).context.appliedSecretMac).toBe('mac-2');
  });
});
