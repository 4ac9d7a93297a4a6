/**
 * The rounds over the due set, against a due set in memory: what each run's outcome settles,
 * a wait in a shard not its consumer's let go unrun, a run that throws handed to the queue, the
 * settlements of one turn sent together, and what a round counts and tells its runner.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Scrubber } from '../../../src/logging/scrubber.js';
import type { CheckTicket, ScheduledWait } from '../../../src/schedule/consumer-queue.js';
import type { Settled, TakenWait } from '../../../src/schedule/due-waits.js';
import { shardOf } from '../../../src/queue/shard-of.js';
import { DueRounds } from '../../../workers/due-rounds.js';
import { again, type JobOutcome } from '../../../workers/job-outcome.js';

const ticket = {
  machine: '{}',
  spec: { login: 'app', values: {}, secretPath: '/s', specHash: 'h' },
  appliedAt: null,
} as unknown as CheckTicket;

function taken(key: string, rev = 3, dueAt = Date.now()): TakenWait {
  return { key, rev: String(rev), dueAt, job: { key, kind: 'wait', rev, wait: 'verify', ticket, seal: 's' } };
}

/** Two shards' due sets in memory: each hands out its waits once. */
function world(
  waits: TakenWait[][],
  run: (job: TakenWait['job']) => Promise<JobOutcome>,
  jobsSaturated?: () => boolean,
) {
  const settles: Array<{ shard: number; settled: Settled[] }> = [];
  const handed: ScheduledWait[] = [];
  const scheduled: ScheduledWait[] = [];
  const ran: string[] = [];
  const rounds = new DueRounds(
    {
      due: {
        shards: waits.length,
        take: (shard, _now, _lease, limit) =>
          Promise.resolve({
            taken: waits[shard]!.splice(0, limit),
            nextAt: waits[shard]!.length > 0 ? Date.now() : null,
          }),
        settle: (shard, settled) => Promise.resolve(void settles.push({ shard, settled: [...settled] })),
        scheduleWaits: (list) => Promise.resolve(void scheduled.push(...list)),
      },
      queue: { queueWaits: (list) => Promise.resolve(void handed.push(...list)) },
      run: (job) => {
        ran.push(job.key);
        return run(job);
      },
      logger: pino({ level: 'silent' }),
      scrubber: new Scrubber(),
      failed: () => undefined,
      ...(jobsSaturated ? { jobsSaturated } : {}),
    },
    16 * waits.length,
  );
  return { rounds, settles, handed, scheduled, ran };
}

/** Keys of `count` consumers whose shard of two is `shard`. */
function keysIn(shard: number, count: number): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) if (shardOf(`cache/c${i}`, 2) === shard) keys.push(`cache/c${i}`);
  return keys;
}

describe('the rounds over the due set', () => {
  it('settle each wait by its run: again at its time, done with otherwise; the settlements of one turn go together', async () => {
    const [a, b, c] = keysIn(0, 3) as [string, string, string];
    const at = new Date(Date.now() + 60_000);
    const outcomes: Record<string, JobOutcome> = { [a]: again(at), [b]: { kind: 'done' }, [c]: again(at, ticket) };
    const w = world([[taken(a), taken(b), taken(c)], []], (job) => Promise.resolve(outcomes[job.key]!));
    await w.rounds.round(0);
    expect(w.settles).toEqual([
      {
        shard: 0,
        settled: [
          { key: a, rev: '3', at: at.getTime() },
          { key: b, rev: '3', at: null },
          { key: c, rev: '3', at: at.getTime() },
        ],
      },
    ]);
    // the record was read for c: its ticket goes with the wait, at the same revision
    expect(w.scheduled).toEqual([{ key: c, timer: { wait: 'verify', rev: 3, dueAt: at }, ticket }]);
    expect(w.handed).toEqual([]);
  });

  it("let a wait found in a shard not its consumer's go, unrun", async () => {
    const [stray] = keysIn(1, 1) as [string];
    const w = world([[taken(stray)], []], () => Promise.resolve({ kind: 'done' }));
    await w.rounds.round(0);
    expect(w.ran).toEqual([]);
    expect(w.settles).toEqual([{ shard: 0, settled: [{ key: stray, rev: '3', at: null }] }]);
  });

  it('hand a wait whose run threw to the queue as a wait job, then let it go', async () => {
    const [key] = keysIn(1, 1) as [string];
    const w = world([[], [taken(key, 7)]], () => Promise.reject(new Error('the store said no')));
    expect((await w.rounds.round(1)).handedOver).toBe(1);
    // with the seal it was taken with, not a new one
    expect(w.handed).toEqual([
      { key, timer: { wait: 'verify', rev: 7, dueAt: expect.any(Date) as Date }, ticket, seal: 's' },
    ]);
    expect(w.settles).toEqual([{ shard: 1, settled: [{ key, rev: '7', at: null }] }]);
  });

  it('count what its runs found, and the waits taken late; tell its runner whether more are due now', async () => {
    const keys = keysIn(0, 10);
    const late = Date.now() - 5_000;
    const found: JobOutcome['found'][] = [
      'held',
      'held',
      'lost',
      'healed',
      'could-not-ask',
      undefined,
      'held',
      'held',
      'held',
      'held',
    ];
    const outcomes = new Map(keys.map((k, i) => [k, { ...again(new Date(Date.now() + 60_000)), found: found[i] }]));
    const w = world([keys.map((k, i) => taken(k, 3, i < 2 ? late : Date.now())), []], (job) =>
      Promise.resolve(outcomes.get(job.key)!),
    );
    // 32 a process over two shards, 4 rounds at once: a round takes 4 of shard 0's 10
    const told: Array<{ more: boolean }> = [];
    const report = await w.rounds.round(0, (t) => told.push(t));
    expect(report).toEqual({
      shard: 0,
      due: 4,
      checked: 4,
      held: 2,
      lost: 2,
      healed: 1,
      couldNotAsk: 0,
      late: 2,
      handedOver: 0,
    });
    expect(told).toEqual([{ more: true, nextAt: expect.any(Number) as number }]);
    await w.rounds.round(0);
    await w.rounds.round(0);
    const last: Array<{ more: boolean; nextAt: number | null }> = [];
    expect((await w.rounds.round(0, (t) => last.push(t))).due).toBe(0);
    expect(last).toEqual([{ more: false, nextAt: null }]);
  });

  it('while every job slot is taken, run at most a small share of the limit over all rounds, and take nothing beyond it', async () => {
    const keys = keysIn(0, 6);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const w = world(
      [keys.map((k) => taken(k)), []],
      async () => {
        await held;
        return again(new Date(Date.now() + 60_000));
      },
      () => true,
    );
    // 32 a process: 1 at once while giving way
    const told: Array<{ more: boolean }> = [];
    const first = w.rounds.round(0, (t) => told.push(t));
    await new Promise((r) => setImmediate(r));
    expect(await w.rounds.round(0)).toMatchObject({ due: 0 });
    expect(told).toEqual([]); // the next round only once this one's runs ended
    release();
    expect(await first).toMatchObject({ due: 1 });
    expect(told).toEqual([{ more: true, nextAt: expect.any(Number) as number }]);
    expect(w.ran).toHaveLength(1);
  });
});
