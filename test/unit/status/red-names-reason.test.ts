/**
 * A red status always names its reason: whatever makes `healthy` false, the report carries a line
 * saying why, in its own problems or in the problems of the provider that is not healthy (what
 * `providers[].problems` shows in `holdfast status --json`). Generated over every condition the
 * status knows, alone and together, including the queue's notes disagreeing with one another as
 * they do while a heal runs (a consumer's state read before its brief changed; a check memo newer
 * than the checked set).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATE_MEANINGS } from '../../../machines/consumer-health.js';
import type { ConsumerStateName } from '../../../machines/consumer-machine.js';
import type { ConsumerBrief } from '../../../src/queue/consumer-brief.js';
import type { CheckMemo, NodesNote, OrphanReport, Pause } from '../../../src/queue/coordination.js';
import { fakeCoordination } from '../../support/coordination-fake.js';
import type { ProviderStatus } from '../../../src/store/consumer-store.js';
import { redReasons, statusReport, type StatusSources } from '../../../src/status/status-report.js';

const now = new Date('2026-12-02T09:00:00Z');
const at = now.getTime();
const TIMING = { verifyEveryMs: 10_000, checkTimeoutMs: 5_000 } as never;
/** Longer ago than the silence limit (2 × 10 s + 5 s). */
const LONG_AGO = at - 60_000;

/**
 * One consumer of provider `cache`: its noted state, its brief (absent: none noted), its memo, its place in the checked
 * set.
 */
interface Consumer {
  state: ConsumerStateName | 'unreadable';
  refused: boolean;
  /** The brief's state: the same as `state`, another (noted after the states were read), or none. */
  brief: 'same' | 'held' | 'lost' | 'none';
  /** When its last check ended, as the checked set has it, and as its memo has it (null: no memo). */
  checkedAt: number;
  memoAt: number | null;
  since: number;
}

interface World {
  configured: boolean;
  status: 'none' | 'never-good' | 'good' | 'refused';
  declaredExtra: number;
  pause: boolean;
  nodes: 'none' | 'one-down' | 'lacking';
  couldNotAsk: number;
  /** Consumers a node event made suspect, not asked since. */
  suspects: number;
  heldRemovals: boolean;
  orphans: boolean;
  lastCheckAt: 'recent' | 'long-ago' | 'none';
  alive: boolean;
  /** Consumers whose state in the queue's Redis fails its seal (written by another): unknown. */
  unsealed: number;
  consumers: Consumer[];
}

const STATES = Object.keys(STATE_MEANINGS) as ConsumerStateName[];

/** Mostly `fine`, now and then one of `others`: a red world then often has one reason only. */
function mostly<T>(fine: T, ...others: T[]): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: fc.constant(fine), weight: 5 }, { arbitrary: fc.constantFrom(...others), weight: 1 });
}

const consumerArb: fc.Arbitrary<Consumer> = fc.record({
  state: mostly<Consumer['state']>('held', ...STATES, 'unreadable'),
  refused: mostly(false, true),
  brief: mostly<Consumer['brief']>('same', 'held', 'lost', 'none'),
  checkedAt: mostly(at - 1_000, LONG_AGO),
  memoAt: mostly<number | null>(at - 1_000, null, LONG_AGO),
  since: fc.constantFrom(at - 1_000, LONG_AGO),
});

const worldArb: fc.Arbitrary<World> = fc.record({
  configured: mostly(true, false),
  status: mostly<World['status']>('good', 'none', 'never-good', 'refused'),
  declaredExtra: mostly(0, 2),
  pause: mostly(false, true),
  nodes: mostly<World['nodes']>('none', 'one-down', 'lacking'),
  couldNotAsk: mostly(0, 3),
  suspects: mostly(0, 1, 4),
  heldRemovals: mostly(false, true),
  orphans: mostly(false, true),
  lastCheckAt: mostly<World['lastCheckAt']>('recent', 'long-ago', 'none'),
  alive: mostly(true, false),
  unsealed: mostly(0, 1, 2),
  consumers: fc.array(consumerArb, { minLength: 1, maxLength: 6 }),
});

/** A world where everything is fine, for the single conditions. */
const GREEN: World = {
  configured: true,
  status: 'good',
  declaredExtra: 0,
  pause: false,
  nodes: 'none',
  couldNotAsk: 0,
  suspects: 0,
  heldRemovals: false,
  orphans: false,
  lastCheckAt: 'recent',
  alive: true,
  unsealed: 0,
  consumers: [
    { state: 'held', refused: false, brief: 'same', checkedAt: at - 1_000, memoAt: at - 1_000, since: LONG_AGO },
  ],
};

function brief(c: Consumer, i: number): ConsumerBrief {
  const state = c.brief === 'same' ? c.state : c.brief === 'lost' ? 'lost' : 'held';
  return {
    rev: 3,
    state,
    since: c.since,
    login: `app_${i}`,
    brakeCount: 0,
    reason: state === 'held' ? 'applied' : 'not held: missing',
    dueAt: at + 5_000,
    lastCheck: { at: c.checkedAt, outcome: 'held', detail: null },
    refused: c.refused ? 'values.keys: not allowed' : null,
  };
}

function sources(world: World): StatusSources {
  const keys = world.consumers.map((_, i) => `cache/c${i}`);
  const states = Object.fromEntries(world.consumers.map((c, i) => [keys[i]!, `${c.state}${c.refused ? '!' : ''} 3`]));
  const briefs = new Map(
    world.consumers.flatMap((c, i) => (c.brief === 'none' ? [] : [[keys[i]!, brief(c, i)] as const])),
  );
  const memos = new Map(
    world.consumers.flatMap((c, i): Array<[string, CheckMemo]> =>
      c.memoAt === null ? [] : [[keys[i]!, { at: c.memoAt, outcome: 'held', detail: null, rev: 3 } as CheckMemo]],
    ),
  );
  const checked = world.consumers.map((c, i) => [keys[i]!, c.checkedAt] as [string, number]);
  const restart = { node: '10.0.0.1:6379', why: 'new-run-id' as const, at: '2026-12-07T06:05:10.000Z' };
  const pause: Pause = { since: new Date(at - 30_000).toISOString(), reason: 'checks time out' };
  const nodes: NodesNote | undefined =
    world.nodes === 'none'
      ? undefined
      : {
          at: now.toISOString(),
          nodes: [
            { address: '10.0.0.1:6379', role: 'master', answering: true },
            world.nodes === 'one-down'
              ? { address: '10.0.0.2:6379', role: 'replica', answering: false }
              : { address: '10.0.0.2:6379', role: 'replica', answering: true, missing: 2 },
          ],
        };
  const orphans: OrphanReport = { prefix: 'app_', at: now.toISOString(), logins: ['app_stray'] };
  const lastCheckAt = world.lastCheckAt === 'none' ? undefined : world.lastCheckAt === 'recent' ? at - 1_000 : LONG_AGO;
  const coordination = fakeCoordination({
    notes: {
      allStates: () => ({ states, unsealed: Array.from({ length: world.unsealed }, (_, i) => `cache/u${i}`) }),
      briefsOf: (asked: readonly string[]) =>
        new Map(asked.flatMap((k) => (briefs.has(k) ? [[k, briefs.get(k)!] as const] : []))),
      lastCheckedAt: () => new Map(lastCheckAt === undefined ? [] : [['cache', lastCheckAt]]),
      askedCounts: () => new Map(),
      checkedBefore: (_provider: string, before: number, limit: number) =>
        checked.filter(([, t]) => t < before).slice(0, limit),
      orphans: () => new Map(world.orphans ? [['cache', orphans]] : []),
      nodes: () => new Map(nodes ? [['cache', nodes]] : []),
      failedLogins: () => new Map(),
      timeline: () => [],
    },
    locks: {
      checkMemos: (asked: readonly string[]) =>
        new Map(asked.flatMap((k) => (memos.has(k) ? [[k, memos.get(k)!] as const] : []))),
    },
    signals: {
      pauses: () => new Map(world.pause ? [['cache', pause]] : []),
      couldNotAskCounts: () => new Map(world.couldNotAsk > 0 ? [['cache', world.couldNotAsk]] : []),
      suspects: () =>
        new Map(
          world.suspects > 0
            ? [['cache', { count: world.suspects, event: { ...restart, of: Math.max(4, world.suspects) } }]]
            : [],
        ),
      alive: () => world.alive,
    },
    contests: { contested: () => new Map() },
  });
  const recorded = world.consumers.length;
  const status: ProviderStatus = {
    _id: 'cache',
    contributionsError:
      world.status === 'never-good' || world.status === 'refused'
        ? 'cache.yaml line 3: consumers[0].login: too long'
        : null,
    errorSince: null,
    lastGoodAt: world.status === 'never-good' ? null : now,
    consumers: recorded + world.declaredExtra,
    heldRemovals: world.heldRemovals
      ? { file: 'cache.yaml', change: 'x', removals: 9, of: 10, since: now, sample: ['cache/c1'] }
      : null,
  };
  return {
    store: { providerStatuses: () => Promise.resolve(world.status === 'none' ? [] : [status]) },
    coordination,
    providers: world.configured ? [{ name: 'cache', timing: TIMING }] : [],
  };
}

/** What a red report must carry: a line of its own, or one in each provider that is not healthy. */
async function expectReasons(world: World): Promise<void> {
  for (const all of [false, true]) {
    const report = await statusReport(sources(world), now, { all });
    // a state holdfast did not write is never taken for served
    if (world.unsealed > 0) expect(report.healthy, JSON.stringify(world)).toBe(false);
    if (report.healthy) continue;
    expect(redReasons(report).length, JSON.stringify(world)).toBeGreaterThan(0);
    for (const p of report.providers)
      if (!p.healthy)
        expect(
          p.problems.length,
          `provider ${p.provider} red with no problem: ${JSON.stringify(world)}`,
        ).toBeGreaterThan(0);
    expect(
      report.problems.length + report.providers.reduce((n, p) => n + p.problems.length, 0),
      JSON.stringify(world),
    ).toBeGreaterThan(0);
  }
}

describe('a red status names its reason', () => {
  it('is green over a world where everything is fine', async () => {
    const report = await statusReport(sources(GREEN), now);
    expect(report.healthy).toBe(true);
    expect(redReasons(report)).toEqual([]);
  });

  it.each(STATES.filter((s) => !STATE_MEANINGS[s].healthy))(
    'names a provider with a consumer %s, whatever the brief says',
    async (state) => {
      for (const b of ['same', 'held', 'none'] as const) {
        const world = { ...GREEN, consumers: [{ ...GREEN.consumers[0]!, state, brief: b }] };
        const report = await statusReport(sources(world), now);
        expect(report.healthy).toBe(false);
        expect(report.providers[0]!.problems, `${state}, brief ${b}`).not.toEqual([]);
      }
    },
  );

  it('names a held consumer not asked for too long while the others are, and takes a later check in its memo for asked', async () => {
    const silent = { ...GREEN.consumers[0]!, checkedAt: LONG_AGO, memoAt: LONG_AGO };
    const report = await statusReport(sources({ ...GREEN, consumers: [...GREEN.consumers, silent] }), now);
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.problems).toEqual([
      '1 held consumer not asked for over 25s: their checks may be lost or queued behind a backlog (listed)',
    ]);
    expect(report.consumers.map((c) => [c.consumer, c.problem])).toEqual([
      ['cache/c1', 'not asked for 1m: is a worker running?'],
    ]);
    // the checked set older than the memo (the memo says a check ended since): asked, green, as the consumer's own line
    // would say
    const asked = await statusReport(
      sources({ ...GREEN, consumers: [...GREEN.consumers, { ...silent, memoAt: at - 1_000 }] }),
      now,
    );
    expect(redReasons(asked)).toEqual([]);
    expect(asked.healthy).toBe(true);
  });

  it('names consumer states holdfast did not write, counted neither as held nor as without a record', async () => {
    const report = await statusReport(sources({ ...GREEN, unsealed: 2 }), now);
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.states).toEqual({ held: 1 });
    expect(report.providers[0]!.problems).toEqual([
      "2 consumer states in the queue's Redis that holdfast did not write (cache/u0, cache/u1): unverified, taken as not asked; forged by a writer of that Redis, or left by a release before seals until the next sweep notes them again",
    ]);
  });

  it('is red while a node event has consumers not asked since, naming the node, what happened, when, and how many', async () => {
    const report = await statusReport(sources({ ...GREEN, suspects: 3 }), now);
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.problems).toEqual([
      'node 10.0.0.1:6379 restarted at 06:05:10 (new run id): 3 of 4 consumers not asked since',
    ]);
    // said after `provider cache:`, its counts with separators as a person reads them
    expect(redReasons(await statusReport(sources({ ...GREEN, suspects: 6120 }), now))).toEqual([
      'provider cache: node 10.0.0.1:6379 restarted at 06:05:10 (new run id): 6,120 of 6,120 consumers not asked since',
    ]);
    expect(report.providers[0]!.suspects).toEqual({
      count: 3,
      event: { node: '10.0.0.1:6379', why: 'new-run-id', at: '2026-12-07T06:05:10.000Z', of: 4 },
    });
    expect((await statusReport(sources(GREEN), now)).providers[0]!.suspects).toBeNull();
  });

  it('names its reason in every generated world that is red', async () => {
    await fc.assert(fc.asyncProperty(worldArb, expectReasons), { numRuns: 400 });
  });
});
