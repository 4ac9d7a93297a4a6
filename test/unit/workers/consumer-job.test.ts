/**
 * One job's protocol against in-memory stand-ins for the store and the queue's Redis (the
 * backend is a recording stand-in too; the real ones are the integration tests' business):
 * the grant secret is read once per apply, and a routine check that finds the consumer lost
 * hands what it stepped to the job, which steps each event once and heals it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as MachineStep from '../../../machines/machine-step.js';
import { step } from '../../../machines/machine-step.js';
import type * as StepMemo from '../../../machines/step-memo.js';
import { keepStep } from '../../../machines/step-memo.js';
import type { Adapter, Grant, HoldsAnswer } from '../../../src/adapters/adapter.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import type { Finding, FindingOutcome } from '../../../src/queue/contest.js';
import type { CheckMemo, Claim, LockClaim, LockRelease } from '../../../src/queue/coordination.js';
import type { ConsumerJobData, ScheduledWait } from '../../../src/schedule/consumer-queue.js';
import { jobDataOf } from '../../../src/schedule/job-data.js';
import { JobSeal } from '../../../src/queue/job-seal.js';
import { KnownWaits } from '../../../src/schedule/known-waits.js';
import type * as GrantSecret from '../../../src/secrets/grant-secret.js';
import { readGrantSecret } from '../../../src/secrets/grant-secret.js';
import type { ConsumerRecord, DesiredSpec, HistoryEntry } from '../../../src/store/consumer-record.js';
import type { RecordChange } from '../../../src/store/consumer-store.js';
import { runConsumerJob, type JobDeps, type JobOutcome } from '../../../workers/consumer-job.js';
import { runRound, type Ran, type RoundCheckDeps } from '../../../workers/round-checks.js';
import type { WaitJob } from '../../../workers/wait-job.js';
import { createEffects } from '../../../workers/effects.js';
import { JobTrust } from '../../../workers/job-trust.js';
import type { ProviderGate } from '../../../workers/provider-gate.js';
import { providerRuntime } from '../../../workers/provider-runtime.js';
import { providerConfig } from '../../support/provider-config.js';
import type { ProviderConfig } from '../../../src/config/config.js';

vi.mock('../../../machines/machine-step.js', async (original) => {
  const real = await original<typeof MachineStep>();
  return { ...real, step: vi.fn(real.step) };
});
vi.mock('../../../machines/step-memo.js', async (original) => {
  const real = await original<typeof StepMemo>();
  return { ...real, keepStep: vi.fn(real.keepStep) };
});
vi.mock('../../../src/secrets/grant-secret.js', async (original) => {
  const real = await original<typeof GrantSecret>();
  return { ...real, readGrantSecret: vi.fn(real.readGrantSecret) };
});

const dir = mkdtempSync(join(tmpdir(), 'holdfast-job-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const secretPath = join(dir, 'photos.secret');
writeFileSync(secretPath, 'a-grant-secret-long-enough-to-pass\n', { mode: 0o600 });

const config = providerConfig({
  adapter: redisAcl,
  contributionsPath: join(dir, 'contributions.yaml'),
  policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
});
const key = 'cache/photos';
const spec: DesiredSpec = {
  login: 'app_photos',
  values: { keys: ['photos:*'], channels: [], commands: ['+@read'] },
  secretPath,
  specHash: 'h1',
  source: `${config.contributionsPath}:2`,
  removed: false,
  problems: [],
};

/** A backend that holds what was created, but for the answers a test queues. */
class StandInBackend implements Adapter {
  readonly calls: string[] = [];
  readonly answers: HoldsAnswer[] = [];
  /** Creates still to fail. */
  failCreates = 0;
  create(grant: Grant): Promise<void> {
    this.calls.push(`create ${grant.login}`);
    if (this.failCreates > 0) {
      this.failCreates--;
      return Promise.reject(new Error('ERR injected create failure'));
    }
    return Promise.resolve();
  }
  holds(grant: Grant): Promise<HoldsAnswer> {
    this.calls.push(`holds ${grant.login}`);
    return Promise.resolve(this.answers.shift() ?? { held: true });
  }
  remove(login: string): Promise<void> {
    this.calls.push(`remove ${login}`);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The store, the queue and the queue's Redis, in memory, as much of them as a job uses. */
function standIns() {
  const records = new Map<string, ConsumerRecord>();
  const waits: ScheduledWait[] = [];
  let remembered: number | null = null;
  let memo: CheckMemo | null = null;
  /** Each consumer's removal mark, as the queue's Redis keeps it. */
  const marks = new Map<string, number>();
  const store: JobDeps['store'] = {
    get: (k) => Promise.resolve(records.get(k) ?? null),
    insert: (record) => Promise.resolve(void records.set(record._id, record)),
    save: (k: string, rev: number, change: RecordChange) => {
      const record = records.get(k)!;
      expect(record.rev).toBe(rev);
      const { transition, desired, ...rest } = change;
      records.set(k, {
        ...record,
        ...rest,
        ...(desired ? { desired: desired.spec, desiredAt: desired.at } : {}),
        ...(transition ? { stateSince: transition.at } : {}),
        rev: rev + 1,
      });
      return Promise.resolve(rev + 1);
    },
    delete: (k) => Promise.resolve(void records.delete(k)),
  };
  const coordination: JobDeps['coordination'] = {
    locks: {
      claim: (k): Promise<Claim> => Promise.resolve({ rev: remembered, memo, removedAt: marks.get(k) ?? null }),
      extend: () => Promise.resolve(true),
      release: (_k, _p, _t, learned) => {
        memo = learned ?? memo;
        return Promise.resolve({ askedAbout: undefined, suspect: false });
      },
      forgetRevision: () => Promise.resolve(void (remembered = null)),
      rememberRevision: (_k, rev) => Promise.resolve(void (remembered = rev)),
      forgetConsumer: () => Promise.resolve(void (remembered = null)),
      markRemoved: (k, at) => Promise.resolve(void marks.set(k, Math.max(at, marks.get(k) ?? at))),
      clearRemoved: (k) => Promise.resolve(void marks.delete(k)),
    },
    notes: {
      noteBriefs: () => Promise.resolve(),
      noteTimeline: () => Promise.resolve(undefined),
    },
  };
  const scheduler: JobDeps['waits'] = { scheduleWaits: (added) => Promise.resolve(void waits.push(...added)) };
  return { records, waits, store, coordination, scheduler, marks };
}

function setUp(management: ProviderConfig['management'] = 'manage') {
  const backend = new StandInBackend();
  const provider = providerRuntime({ ...config, management }, backend);
  const logger = pino({ level: 'silent' });
  const seal = new JobSeal(Buffer.alloc(32, 7));
  const gate = {
    admit: () => Promise.resolve({ admitted: true, probe: false }),
    answered: () => Promise.resolve(false),
    pause: () => Promise.resolve(true),
  } as unknown as ProviderGate;
  const now = () => new Date();
  const effects = createEffects({ fingerprintKey: Buffer.alloc(32, 9), gate, scrubber: new Scrubber(), now });
  const stand = standIns();
  const deps: JobDeps = {
    store: stand.store,
    coordination: stand.coordination,
    waits: stand.scheduler,
    providers: new Map([[config.name, provider]]),
    effects,
    trust: new JobTrust(seal, logger),
    logger,
    now,
  };
  const desiredJob = (at = 1, desired: DesiredSpec | null = spec): ConsumerJobData => ({
    key,
    kind: 'desired',
    at,
    desired,
    seal: seal.desired(key, at, desired),
  });
  /**
   * The job of the last wait scheduled, as the queue would hand it to a worker: frozen, as a round hands a wait it
   * read before (`src/schedule/known-waits.ts`), so that nothing a run does may change the ticket it ran on.
   */
  const waitJob = (): ConsumerJobData => {
    const { timer, ticket } = stand.waits.at(-1)!;
    const carried = JSON.parse(JSON.stringify(ticket)) as typeof ticket;
    const job = {
      key,
      kind: 'wait' as const,
      rev: timer.rev,
      wait: timer.wait,
      ticket: carried,
      seal: seal.ticket(key, timer.rev, timer.wait, carried),
    };
    return new KnownWaits().set({ key, rev: String(job.rev), text: JSON.stringify(job), dueAt: 0 }, job);
  };
  return { backend, deps, stand, desiredJob, waitJob };
}

describe('a consumer job', () => {
  beforeEach(() => {
    vi.mocked(step).mockClear();
    vi.mocked(readGrantSecret).mockClear();
  });

  it('reads the grant secret once for an apply', async () => {
    const { backend, deps, stand, desiredJob } = setUp();
    expect(await runConsumerJob(desiredJob(), deps)).toEqual({ kind: 'done' });
    expect(stand.records.get(key)?.machine.state).toBe('held');
    expect(backend.calls).toEqual(['create app_photos']);
    expect(vi.mocked(readGrantSecret)).toHaveBeenCalledTimes(1);
  });

  it('steps each event once when a routine check finds the consumer lost, and heals it (recorded: its provider does not manage)', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp('no-delete');
    await runConsumerJob(desiredJob(), deps);
    const job = waitJob();
    backend.answers.push({ held: false, reason: 'password-differs', detail: 'the password differs' });
    vi.mocked(step).mockClear();
    vi.mocked(readGrantSecret).mockClear();
    backend.calls.length = 0;

    expect(await runConsumerJob(job, deps)).toEqual({ kind: 'done', found: 'lost' });
    const fed = vi.mocked(step).mock.calls.map(([, , event]) => event.type);
    expect(fed).toEqual([expect.stringContaining('verify'), 'NOT_HELD', 'APPLIED']);
    expect(backend.calls).toEqual(['holds app_photos', 'create app_photos']);
    expect(stand.records.get(key)?.machine.state).toBe('held');
    // once for the check, once for the apply
    expect(vi.mocked(readGrantSecret)).toHaveBeenCalledTimes(2);
  });

  it('writes who caused each transition: the desired spec, the check that found it lost (on the node it named), the heal after it', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp('no-delete');
    const written: HistoryEntry[] = [];
    const { insert, save } = stand.store;
    deps.store = {
      ...deps.store,
      insert: (record) => (written.push(...record.history), insert(record)),
      save: (k, rev, change, history, now) => (
        change.transition && written.push(change.transition),
        save(k, rev, change, history, now)
      ),
    };
    await runConsumerJob(desiredJob(), deps);
    backend.answers.push({
      held: false,
      reason: 'password-differs',
      detail: 'the password differs',
      node: '10.0.0.6:6379',
    });
    await runConsumerJob(waitJob(), deps);
    expect(written.map(({ from, to, by, node }) => ({ from, to, by, node }))).toEqual([
      { from: 'pending', to: 'applying', by: 'desired', node: undefined },
      { from: 'applying', to: 'held', by: 'desired', node: undefined },
      { from: 'held', to: 'lost', by: 'check', node: '10.0.0.6:6379' },
      { from: 'lost', to: 'held', by: 'heal', node: '10.0.0.6:6379' },
    ]);
  });

  it('does not extend a lock it claimed or extended under a second ago before an effect', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    const extend = vi.fn(() => Promise.resolve(true));
    stand.coordination.locks.extend = extend;
    await runConsumerJob(desiredJob(), deps);
    backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
    expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again', found: 'healed' });
    // found missing, applied again, confirmed
    expect(backend.calls).toEqual(['create app_photos', 'holds app_photos', 'create app_photos', 'holds app_photos']);
    expect(extend).not.toHaveBeenCalled();
  });

  it('applies nothing when its lock, claimed over a second ago, was lost before the apply', async () => {
    const { backend, deps, stand, desiredJob } = setUp();
    let clock = Date.parse('2026-12-01T10:00:00Z');
    deps.now = () => new Date((clock += 600)); // every reading of the clock is 0.6 s later
    const extend = vi.fn(() => Promise.resolve(false));
    stand.coordination.locks.extend = extend;
    expect(await runConsumerJob(desiredJob(), deps)).toMatchObject({ kind: 'later', why: 'conflict' });
    expect(extend).toHaveBeenCalledTimes(1);
    expect(backend.calls).toEqual([]);
    expect(stand.records.get(key)).toBeUndefined();
  });

  it("costs a routine check one claim and one release of the queue's Redis and nothing of the store; a heal, one timeline note more", async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    const calls: string[] = [];
    /** Every call of `part`'s methods from now on, in `calls` as `name.method`. */
    const counted = (part: object, name: string) => {
      const methods = part as Record<string, (...args: unknown[]) => unknown>;
      for (const [method, real] of Object.entries(methods))
        methods[method] = (...args: unknown[]) => (calls.push(`${name}.${method}`), real(...args));
    };
    counted(stand.coordination.locks, 'locks');
    counted(stand.coordination.notes, 'notes');
    counted(deps.store, 'store');
    counted(stand.scheduler, 'waits');
    expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again', found: 'held' });
    expect(calls).toEqual(['locks.claim', 'locks.release']);
    calls.length = 0;
    backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
    expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again', found: 'healed' });
    expect(calls).toEqual(['locks.claim', 'notes.noteTimeline', 'locks.release']);
  });

  it('runs a wait job the previous release queued (its former kind, a version 2 ticket) on its sealed ticket', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    const { kind: _kind, ...job } = waitJob() as WaitJob;
    const ticket = { ...job.ticket, machine: { ...job.ticket.machine, version: 2 } };
    const seal = new JobSeal(Buffer.alloc(32, 7)).ticket(key, job.rev, job.wait, ticket);
    const former = { ...job, kind: 'timer', ticket, seal } as unknown as ConsumerJobData; // as the former release queued it
    const stored: string[] = [];
    for (const method of ['get', 'save', 'insert'] as const) {
      const real = (deps.store as unknown as Record<string, (...args: unknown[]) => unknown>)[method];
      if (real)
        (deps.store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => (
          stored.push(method),
          real(...args)
        );
    }
    backend.calls.length = 0;
    backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
    // healed on its ticket (trusted whole: sealed), the store neither read nor written
    expect(await runConsumerJob(jobDataOf(former), deps)).toMatchObject({ kind: 'later', found: 'healed' });
    expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
    expect(stored).toEqual([]);
    expect(stand.records.get(key)?.machine.state).toBe('held');
  });

  it("answers a held consumer's routine check from the chart's kept answers: the chart is not stepped again", async () => {
    const { deps, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    // the first checks step the chart, and keep its answers (the wait's end, then the check's result)
    for (let i = 0; i < 2; i += 1) await runConsumerJob(waitJob(), deps);
    vi.mocked(step).mockClear();
    expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again', found: 'held' });
    expect(vi.mocked(step)).not.toHaveBeenCalled();
  });

  describe('a heal of what the record says was applied', () => {
    /** Every store call from now on, in `calls` beside the backend's. */
    function watchStore(deps: JobDeps, calls: string[]): void {
      const store = deps.store as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const name of ['get', 'insert', 'save', 'delete']) {
        const real = store[name]!;
        store[name] = (...args: unknown[]) => {
          calls.push(`store ${name}`);
          return real(...args);
        };
      }
    }

    it('writes nothing: applied again, confirmed, the same wait again; the timeline and the check memo say so', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      const before = stand.records.get(key)!;
      const waits = stand.waits.length;
      const events: unknown[] = [];
      stand.coordination.notes.noteTimeline = (added) => Promise.resolve(void events.push(...added));
      let memo: CheckMemo | undefined;
      stand.coordination.locks.release = (_k, _p, _t, learned) => {
        memo = learned;
        return Promise.resolve({ askedAbout: undefined, suspect: false });
      };
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      vi.mocked(readGrantSecret).mockClear();
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });

      const outcome = await runConsumerJob(waitJob(), deps);
      expect(outcome).toMatchObject({ kind: 'later', why: 'again', found: 'healed' });
      expect(outcome).not.toHaveProperty('ticket'); // the same ticket carries on
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
      expect(stand.records.get(key)).toBe(before);
      expect(stand.waits).toHaveLength(waits);
      // once for the check and its heal (apply and confirmation): the heal uses what the check read
      expect(vi.mocked(readGrantSecret)).toHaveBeenCalledTimes(1);
      expect(events).toEqual([
        expect.objectContaining({
          kind: 'lost',
          key,
          from: 'held',
          state: 'lost',
          reason: 'missing: no such user',
          by: 'check',
        }),
        expect.objectContaining({
          kind: 'healed',
          key,
          from: 'lost',
          state: 'held',
          reason: 'applied again',
          by: 'heal',
        }),
      ]);
      expect(memo).toMatchObject({
        outcome: 'held',
        detail: 'healed: missing: no such user; applied again',
        rev: before.rev,
      });
      expect(memo!.deepAt).toBe(memo!.at);
    });

    it("keeps no answer of the chart's for the heal's finding (it could never serve, and would push out the checks')", async () => {
      const { backend, deps, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      // a first check keeps the wait's end: the next one is asked from the chart's kept answers, then stepped
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ found: 'held' });
      vi.mocked(keepStep).mockClear();
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ found: 'healed' });
      const kept = vi.mocked(keepStep).mock.calls.map(([, , event]) => event.type);
      expect(kept).not.toContain('NOT_HELD');
      // the checks' answers are still there: a check that finds it held is answered from them (the heal's own steps,
      // but its finding, were kept too), the chart not stepped
      vi.mocked(step).mockClear();
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ found: 'held' });
      expect(vi.mocked(step)).not.toHaveBeenCalled();
    });

    it("answers a heal's steps from the chart's kept answers: the next heal steps the chart for its finding alone", async () => {
      const { backend, deps, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ found: 'healed' });
      vi.mocked(step).mockClear();
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ found: 'healed' });
      expect(vi.mocked(step).mock.calls.map(([, , event]) => event.type)).toEqual(['NOT_HELD']);
    });

    it("sends the heal's note and the lock's release together: the release does not wait for the note's reply", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      const sent: string[] = [];
      let answer: (() => void) | undefined;
      stand.coordination.notes.noteTimeline = () => {
        sent.push('note');
        return new Promise((resolve) => (answer = () => resolve(undefined)));
      };
      stand.coordination.locks.release = () => {
        sent.push('release');
        return Promise.resolve({ askedAbout: undefined, suspect: false });
      };
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      let ended = false;
      const running = runConsumerJob(waitJob(), deps).finally(() => (ended = true));
      await vi.waitUntil(() => sent.includes('release'), { timeout: 60_000 });
      expect(sent).toEqual(['note', 'release']); // the note first, on the same connection
      expect(ended).toBe(false); // the job ends once the note is answered
      answer!();
      expect(await running).toMatchObject({ kind: 'later', why: 'again', found: 'healed' });
    });

    it("tells the heal as the chart stepped it: every event stepped, each transition and its reason the chart's", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      const real = vi.mocked(step).getMockImplementation()!;
      // the chart as another version might word it: the heal's words are whatever the chart's step says
      vi.mocked(step).mockImplementation((machine, snapshot, event) => {
        const moved = real(machine, snapshot, event);
        if (event.type !== 'APPLIED') return moved;
        const context = { ...moved.snapshot.context, reason: 'put back as the chart says' };
        return { ...moved, snapshot: machine.resolveState({ value: moved.snapshot.value, context }) };
      });
      const told: HistoryEntry[] = [];
      deps.observer = { transition: (_provider, transition) => void told.push(transition) };
      const events: Array<{ kind: string; reason: string | null }> = [];
      stand.coordination.notes.noteTimeline = (added) => Promise.resolve(void events.push(...added));
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      vi.mocked(step).mockClear();
      try {
        expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again', found: 'healed' });
      } finally {
        vi.mocked(step).mockImplementation(real);
      }
      // the wait's end, the check's finding, the apply, the confirmation asked and its answer
      const fed = vi.mocked(step).mock.calls.map(([, , event]) => event.type);
      expect(fed).toEqual([expect.stringContaining('verify'), 'NOT_HELD', 'APPLIED', 'CHECK_NOW', 'HELD']);
      expect(told.map(({ from, to, reason, by }) => ({ from, to, reason, by }))).toEqual([
        { from: 'held', to: 'lost', reason: 'missing: no such user', by: 'check' },
        { from: 'lost', to: 'held', reason: 'put back as the chart says', by: 'heal' },
      ]);
      expect(events.map(({ kind, reason }) => [kind, reason])).toEqual([
        ['lost', 'missing: no such user'],
        ['healed', 'put back as the chart says'],
      ]);
    });

    it("counts the heal's finding with its timeline note (one call: the same round trip), and says once that the consumer became contested", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      const said: Array<{ level: number; msg: string }> = [];
      deps.logger = pino(
        { level: 'info' },
        { write: (line: string) => void said.push(JSON.parse(line) as { level: number; msg: string }) },
      );
      await runConsumerJob(desiredJob(), deps);
      const notes: Array<[number, Finding | undefined]> = [];
      const answers: FindingOutcome[] = [
        { counted: true, findings: 3, contested: true, became: true },
        { counted: true, findings: 4, contested: true, became: false },
      ];
      stand.coordination.notes.noteTimeline = (events, finding) =>
        Promise.resolve(void notes.push([events.length, finding])).then(() => answers.shift());
      for (let i = 0; i < 2; i++) {
        backend.answers.push({ held: false, reason: 'rules-differ', detail: 'commands: the backend also has +@all' });
        expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', found: 'healed' });
      }
      expect(notes).toEqual([
        [
          2,
          {
            key,
            reason: 'rules-differ',
            words: 'rules-differ (commands: the backend also has +@all)',
            at: expect.any(Number) as number,
            windowMs: 3_600_000,
            waveMs: 2 * config.timing.verifyEveryMs,
          },
        ],
        [2, expect.objectContaining({ key, reason: 'rules-differ' }) as Finding],
      ]);
      // said once, as it became contested; the second heal says nothing of it
      expect(said.filter((l) => l.msg.includes('is contested')).map((l) => [l.level, l.msg])).toEqual([
        [
          40,
          `${key} is contested: changed outside holdfast 3 times in 1h, last: rules-differ (commands: the backend also has +@all)`,
        ],
      ]);
    });

    it('records a re-apply its confirmation still finds not held, without applying it again: the brake counts it', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      backend.answers.push(
        { held: false, reason: 'rules-differ', detail: 'keys differ' },
        { held: false, reason: 'rules-differ', detail: 'keys differ' },
      );

      expect(await runConsumerJob(waitJob(), deps)).toEqual({ kind: 'done', found: 'lost' });
      expect(backend.calls).toEqual([
        'holds app_photos',
        'create app_photos',
        'holds app_photos',
        'store get',
        'store save',
      ]);
      // one successful re-apply without being held: the brake counts it
      expect(stand.records.get(key)?.machine).toMatchObject({ state: 'held', context: { brakeCount: 1 } });
    });

    it('records a re-apply that failed, retried on its own backoff, not applied again at once', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      backend.failCreates = 1;
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toEqual({ kind: 'done', found: 'lost' });
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'store get', 'store save']);
      expect(stand.records.get(key)?.machine).toMatchObject({
        state: 'retrying',
        context: { retryCount: 1, brakeCount: 0 },
      });
    });

    it("heals with the grant secret its check read; a rotation just after is the next check's, written before it is applied", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      const real = vi.mocked(readGrantSecret).getMockImplementation()!;
      // the check reads the secret; it rotates right after
      vi.mocked(readGrantSecret).mockImplementationOnce(async (...args) => {
        const read = await real(...args);
        writeFileSync(secretPath, 'a-rotated-grant-secret-long-enough\n', { mode: 0o600 });
        return read;
      });
      try {
        // healed with what the record says was applied (the check's secret): nothing written
        expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again' });
        expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
        backend.calls.length = 0;
        // the next check finds the rotation (the backend, asked with the new secret, does not hold it): written before
        // it is applied
        backend.answers.push({ held: false, reason: 'password-differs', detail: 'the password differs' });
        expect(await runConsumerJob(waitJob(), deps)).toEqual({ kind: 'done', found: 'lost' });
        const calls = backend.calls.join(', ');
        expect(calls).toMatch(/store save, create app_photos/);
        expect(backend.calls.indexOf('store save')).toBeLessThan(backend.calls.indexOf('create app_photos'));
      } finally {
        writeFileSync(secretPath, 'a-grant-secret-long-enough-to-pass\n', { mode: 0o600 });
      }
      expect(stand.records.get(key)?.machine.state).toBe('held');
    });

    it('leaves the brake to the record: a consumer re-applied once without being held is braked, not healed quietly', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      const differs: HoldsAnswer = { held: false, reason: 'rules-differ', detail: 'keys differ' };
      backend.answers.push(differs, differs);
      await runConsumerJob(waitJob(), deps); // healed, not confirmed: recorded, the brake counts one
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      backend.answers.push(differs);
      expect(await runConsumerJob(waitJob(), deps)).toEqual({ kind: 'done', found: 'lost' });
      expect(backend.calls).toEqual(['holds app_photos', 'store get', 'store save', 'create app_photos', 'store save']);
      expect(stand.records.get(key)?.machine).toMatchObject({ state: 'backoff', context: { brakeCount: 2 } });
    });

    it("applies nothing its provider's configuration refuses now: left to the record, which says so", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      // the policy tightened since the apply: the commands applied are no longer allowed
      const tightened = providerRuntime(
        { ...config, policy: redisAcl.policySchema.parse({ allowedCommands: ['+@write'] }) },
        backend,
      );
      deps.providers = new Map([[config.name, tightened]]);
      backend.calls.length = 0;
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toEqual({ kind: 'done', found: 'lost' });
      expect(backend.calls).toEqual(['holds app_photos']);
      expect(stand.records.get(key)?.machine.state).toBe('applyRefused');
    });

    it('applies nothing when its lock, claimed over a second ago, was lost before the heal', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      const job = waitJob();
      let clock = Date.now();
      deps.now = () => new Date((clock += 600)); // every reading of the clock is 0.6 s later
      stand.coordination.locks.extend = () => Promise.resolve(false);
      backend.calls.length = 0;
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(job, deps)).toMatchObject({ kind: 'later', why: 'conflict' });
      expect(backend.calls).toEqual(['holds app_photos']);
    });

    it('heals while the record store does not answer, and puts anything else off by an interval without asking it', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      backend.calls.length = 0;
      watchStore(deps, backend.calls);
      deps.storeDown = () => true;
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect(await runConsumerJob(waitJob(), deps)).toMatchObject({ kind: 'later', why: 'again' });
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);

      // still not held after the heal: the brake's case waits for the store, an interval on
      backend.calls.length = 0;
      backend.answers.push(
        { held: false, reason: 'missing', detail: 'no such user' },
        { held: false, reason: 'missing', detail: 'no such user' },
      );
      const started = Date.now();
      const later = await runConsumerJob(waitJob(), deps);
      expect(later).toMatchObject({ kind: 'later', why: 'store-down' });
      expect((later as { at: Date }).at.getTime() - started).toBeGreaterThan(config.timing.verifyEveryMs / 2);
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
      expect(stand.records.get(key)?.rev).toBe(2);
    });
  });

  describe('after a removal', () => {
    const older: DesiredSpec = {
      ...spec,
      values: { keys: ['photos:old:*'], channels: [], commands: ['+@read'] },
      specHash: 'h-old',
    };

    it('drops a spec read before the removal that comes after it: the consumer stays removed', async () => {
      const { backend, deps, stand, desiredJob } = setUp();
      await runConsumerJob(desiredJob(1), deps);
      // round 9 removes it; round 10's spec was put back (busy) and comes after round 11's removal
      expect(await runConsumerJob(desiredJob(9, null), deps)).toEqual({ kind: 'done' });
      expect(stand.records.has(key)).toBe(false);
      expect(stand.marks.get(key)).toBe(9);
      expect(await runConsumerJob(desiredJob(11, null), deps)).toEqual({ kind: 'absent' });
      expect(stand.marks.get(key)).toBe(11);
      expect(await runConsumerJob(desiredJob(10, older), deps)).toEqual({ kind: 'stale' });
      expect(stand.records.has(key)).toBe(false);
      expect(backend.calls).toEqual(['create app_photos', 'remove app_photos']);
    });

    it('makes the consumer again from a spec read after the removal, and clears the mark', async () => {
      const { backend, deps, stand, desiredJob } = setUp();
      await runConsumerJob(desiredJob(1), deps);
      await runConsumerJob(desiredJob(9, null), deps);
      expect(await runConsumerJob(desiredJob(12), deps)).toEqual({ kind: 'done' });
      expect(stand.records.get(key)).toMatchObject({ desiredAt: 12, machine: { state: 'held' } });
      expect(stand.marks.has(key)).toBe(false);
      // and an older spec than the record's is stale against the record itself
      expect(await runConsumerJob(desiredJob(10, older), deps)).toEqual({ kind: 'stale' });
      expect(backend.calls).toEqual(['create app_photos', 'remove app_photos', 'create app_photos']);
    });
  });
});

describe("a round's waits, run together", () => {
  /** The round's locks: the stand-ins' claims and releases, taken and released many at a time, every call in `calls`. */
  function together(deps: JobDeps, calls: string[]): RoundCheckDeps {
    const locks = deps.coordination.locks;
    const counted = <T extends unknown[], R>(name: string, real: (...args: T) => R) => {
      return (...args: T): R => (calls.push(name), real(...args));
    };
    return {
      ...deps,
      coordination: {
        ...deps.coordination,
        locks: {
          ...locks,
          claim: counted('locks.claim', (k: string, t: string, ms: number) => locks.claim(k, t, ms)),
          release: counted('locks.release', (...args: Parameters<typeof locks.release>) => locks.release(...args)),
          claimMany: counted('locks.claimMany', (claims: readonly LockClaim[]) =>
            Promise.all(claims.map((c) => locks.claim(c.key, c.token, c.ttlMs))),
          ),
          releaseMany: counted('locks.releaseMany', (releases: readonly LockRelease[]) =>
            Promise.all(releases.map((r) => locks.release(r.key, r.provider, r.token, r.memo, r.asked))),
          ),
        },
      },
    };
  }

  /** The round's outcomes, each wait's by its place. */
  async function round(jobs: ConsumerJobData[], deps: RoundCheckDeps): Promise<Ran[]> {
    const ran: Ran[] = [];
    await runRound(jobs as WaitJob[], deps, (at, one) => (ran[at] = one));
    return ran;
  }

  it("claims and releases a held consumer's lock with the round's (one call each), reads no record, steps no chart", async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    for (let i = 0; i < 2; i += 1) await runConsumerJob(waitJob(), deps); // the chart's answers kept
    const calls: string[] = [];
    const reads = vi.spyOn(stand.store, 'get');
    vi.mocked(step).mockClear();
    backend.calls.length = 0;
    const ran = await round([waitJob()], together(deps, calls));
    expect(ran).toEqual([
      { outcome: expect.objectContaining({ kind: 'later', why: 'again', found: 'held' }) as JobOutcome },
    ]);
    expect(calls).toEqual(['locks.claimMany', 'locks.releaseMany']);
    expect(backend.calls).toEqual(['holds app_photos']);
    expect(reads).not.toHaveBeenCalled();
    expect(vi.mocked(step)).not.toHaveBeenCalled();
  });

  it('heals a consumer its check finds missing in the round itself (round-heals.ts): asked once, one release call, no record', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    await runConsumerJob(waitJob(), deps); // the chart's answer to the wait's end kept
    const calls: string[] = [];
    backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
    backend.calls.length = 0;
    const reads = vi.spyOn(stand.store, 'get');
    const saves = vi.spyOn(stand.store, 'save');
    const [ran] = await round([waitJob()], together(deps, calls));
    expect(ran).toEqual({
      outcome: expect.objectContaining({ kind: 'later', why: 'again', found: 'healed' }) as JobOutcome,
    });
    // found missing (the round's check), applied again, confirmed: nothing asked twice
    expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
    // the round releases the lock it claimed, with the others it released: no run of its own
    expect(calls).toEqual(['locks.claimMany', 'locks.releaseMany']);
    expect(reads).not.toHaveBeenCalled();
    expect(saves).not.toHaveBeenCalled();
  });

  describe("a round's quiet heals, as arrays (round-heals.ts)", () => {
    /** A logger whose lines are kept, and the round's deps with it. */
    function logged(deps: JobDeps): { lines: Array<{ msg: string; level: number }>; deps: JobDeps } {
      const lines: Array<{ msg: string; level: number }> = [];
      const stream = { write: (line: string) => lines.push(JSON.parse(line) as { msg: string; level: number }) };
      return { lines, deps: { ...deps, logger: pino({ level: 'debug' }, stream) } };
    }

    /** What a round's heal told the timeline: each consumer's transitions, in order. */
    function timelineOf(deps: JobDeps): Array<{ from: string | undefined; to: string }> {
      const noted: Array<{ from: string | undefined; to: string }> = [];
      const notes = deps.coordination.notes;
      deps.coordination = {
        ...deps.coordination,
        notes: {
          ...notes,
          noteTimeline: (events, finding) => {
            for (const e of events) noted.push({ from: e.from, to: e.state });
            return notes.noteTimeline(events, finding);
          },
        },
      };
      return noted;
    }

    it('says the finding and the heal as the run says them, and notes held → lost → held from the chart', async () => {
      const set = setUp();
      await runConsumerJob(set.desiredJob(), set.deps);
      await runConsumerJob(set.waitJob(), set.deps);
      const { lines, deps } = logged(set.deps);
      const timeline = timelineOf(deps);
      set.backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      const [ran] = await round([set.waitJob()], together(deps, []));
      expect(ran).toEqual({ outcome: expect.objectContaining({ found: 'healed' }) as JobOutcome });
      const said = lines.filter((l) => l.level >= 30).map((l) => l.msg);
      expect(said).toEqual([
        expect.stringMatching(/not held \(missing/),
        expect.stringMatching(/^held → lost → held: .*applied again in .*\(not written/),
      ]);
      expect(timeline.map(({ from, to }) => `${from} → ${to}`)).toEqual(['held → lost', 'lost → held']);
    });

    it('hands a failed apply to its run, which does not apply again: written on the record, retried on its backoff', async () => {
      const set = setUp();
      const { backend, stand, desiredJob, waitJob } = set;
      await runConsumerJob(desiredJob(), set.deps);
      await runConsumerJob(waitJob(), set.deps);
      const { lines, deps } = logged(set.deps);
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      backend.failCreates = 1;
      backend.calls.length = 0;
      const calls: string[] = [];
      const [ran] = await round([waitJob()], together(deps, calls));
      // the finding said once: by the round as its applies began, not again by the run it handed the consumer to
      expect(lines.filter((l) => /not held \(missing/.test(l.msg))).toHaveLength(1);
      expect(ran).toEqual({ outcome: expect.objectContaining({ kind: 'done', found: 'lost' }) as JobOutcome });
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos']);
      expect(stand.records.get(key)!.machine.state).toBe('retrying');
      expect(calls).toEqual(['locks.claimMany', 'locks.release']);
    });

    it('hands a confirmation that does not find it held to its run, which asks nothing again and counts the brake', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      await runConsumerJob(waitJob(), deps);
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      backend.answers.push({ held: false, reason: 'rules-differ', detail: 'the rules differ' });
      backend.calls.length = 0;
      await round([waitJob()], together(deps, []));
      expect(backend.calls).toEqual(['holds app_photos', 'create app_photos', 'holds app_photos']);
      const record = stand.records.get(key)!;
      expect(record.machine.context.brakeCount).toBe(1);
    });

    it("judges the policy again for a wait healed before once its provider's configuration changes", async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      await runConsumerJob(waitJob(), deps);
      const job = waitJob(); // the same frozen job each time its wait is taken again with the same text
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      expect((await round([job], together(deps, [])))[0]).toEqual({
        outcome: expect.objectContaining({ found: 'healed' }) as JobOutcome,
      });
      const tightened = providerRuntime(
        { ...config, policy: redisAcl.policySchema.parse({ allowedCommands: ['+@write'] }) },
        backend,
      );
      deps.providers = new Map([[config.name, tightened]]);
      backend.calls.length = 0;
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      await round([job], together(deps, []));
      expect(backend.calls).toEqual(['holds app_photos']);
      expect(stand.records.get(key)?.machine.state).toBe('applyRefused');
    });

    it('writes nothing when the lock is lost before the apply: no apply, the run says the lock is lost', async () => {
      const { backend, deps, stand, desiredJob, waitJob } = setUp();
      await runConsumerJob(desiredJob(), deps);
      await runConsumerJob(waitJob(), deps);
      backend.answers.push({ held: false, reason: 'missing', detail: 'no such user' });
      backend.calls.length = 0;
      const before = stand.records.get(key)!.rev;
      // the round's claim is over a second old by the apply: the lock is extended first, and found lost
      let clock = Date.now();
      const later = { ...deps, now: () => new Date((clock += 600)) };
      stand.coordination.locks.extend = () => Promise.resolve(false);
      const [ran] = await round([waitJob()], together(later, []));
      const conflict = {
        kind: 'later',
        why: 'conflict',
        error: expect.objectContaining({ code: 'REVISION_CONFLICT' }) as unknown,
      };
      expect(ran).toEqual({ outcome: expect.objectContaining(conflict) as JobOutcome });
      expect(backend.calls).toEqual(['holds app_photos']);
      expect(stand.records.get(key)!.rev).toBe(before);
    });
  });

  it('hands a consumer found held under another fingerprint of its secret to its own run, which records it', async () => {
    const { deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    await runConsumerJob(waitJob(), deps); // the chart's answer to the wait's end kept
    const before = stand.records.get(key)!;
    // the backend holds the login with this secret (the stand-in holds whatever it is asked): a fingerprint to keep
    writeFileSync(secretPath, 'another-grant-secret-of-another-length\n', { mode: 0o600 });
    try {
      const [ran] = await round([waitJob()], together(deps, []));
      expect(ran).toEqual({ outcome: expect.objectContaining({ found: 'held' }) as JobOutcome });
      const after = stand.records.get(key)!;
      expect(after.rev).toBeGreaterThan(before.rev);
      expect(after.machine.context.appliedSecretMac).not.toBe(before.machine.context.appliedSecretMac);
      // and back (the chart's answer to such a finding is kept now: the one it keeps is not the ticket's consumer)
      writeFileSync(secretPath, 'a-grant-secret-long-enough-to-pass\n', { mode: 0o600 });
      await round([waitJob()], together(deps, []));
      expect(stand.records.get(key)!.machine.context.appliedSecretMac).toBe(before.machine.context.appliedSecretMac);
    } finally {
      writeFileSync(secretPath, 'a-grant-secret-long-enough-to-pass\n', { mode: 0o600 });
    }
  });

  it('puts back a wait whose lock another holds, asking nothing', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    await runConsumerJob(waitJob(), deps); // the chart's answer to the wait's end kept
    stand.coordination.locks.claim = () => Promise.resolve(null);
    const calls: string[] = [];
    backend.calls.length = 0;
    const [ran] = await round([waitJob()], together(deps, calls));
    expect(ran).toEqual({ outcome: expect.objectContaining({ kind: 'later', why: 'busy' }) as JobOutcome });
    expect(backend.calls).toEqual([]);
    expect(calls).toEqual(['locks.claimMany']);
  });

  it('hands a wait whose ticket is behind the record to its own run, its ticket not checked: stale', async () => {
    const { backend, deps, stand, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    await runConsumerJob(waitJob(), deps); // the chart's answer to the wait's end kept
    const job = waitJob();
    await runConsumerJob(desiredJob(2, { ...spec, specHash: 'h2' }), deps); // a new spec: a later revision
    expect(stand.records.get(key)!.rev).toBeGreaterThan((job as WaitJob).rev);
    const calls: string[] = [];
    backend.calls.length = 0;
    const [ran] = await round([job], together(deps, calls));
    expect(ran).toEqual({ outcome: { kind: 'stale' } });
    expect(backend.calls).toEqual([]);
    expect(calls).toEqual(['locks.claimMany', 'locks.release']);
  });

  it('runs a wait whose ticket is not sealed on the record, judged once, its lock its own', async () => {
    const { deps, desiredJob, waitJob } = setUp();
    await runConsumerJob(desiredJob(), deps);
    const calls: string[] = [];
    const judge = vi.spyOn(deps.trust, 'judge');
    const [ran] = await round([{ ...(waitJob() as WaitJob), seal: 'forged' }], together(deps, calls));
    expect(ran).toEqual({
      outcome: expect.objectContaining({ kind: 'later', why: 'again', found: 'held' }) as JobOutcome,
    });
    expect(judge).toHaveBeenCalledTimes(1);
    expect(calls).toEqual(['locks.claim', 'locks.release']);
  });
});
