/** A sharded queue's status stands on the shards that answered, and names each one that did not, once. */
import { describe, expect, it } from 'vitest';
import type { Coordination } from '../../../src/queue/coordination.js';
import { keySlot } from '../../../src/queue/key-slot.js';
import { ShardedCoordination } from '../../../src/queue/sharded-coordination.js';
import { shardOf } from '../../../src/queue/shard-of.js';
import { formatStatus } from '../../../src/status/format-status.js';
import { statusReport, type StatusSources } from '../../../src/status/status-report.js';
import { fakeCoordination } from '../../support/coordination-fake.js';

const SHARDS = 3;
const keys = Array.from({ length: 30 }, (_, i) => `cache/c${String(i).padStart(2, '0')}`);
const statesOf = (shard: number) =>
  Object.fromEntries(keys.filter((k) => shardOf(k, SHARDS) === shard).map((k) => [k, 'held 1']));

/**
 * A shard's reads: its consumers all held, its sentinel there; or every read failing with `fails`, or never answering.
 */
function shard(index: number, how: { fails?: Error; hangs?: boolean } = {}): Coordination {
  const answers = {
    notes: {
      allStates: () => ({ states: statesOf(index), unsealed: [] }),
      briefsOf: () => new Map(),
      lastCheckedAt: () => new Map([['cache', Date.now()]]),
      askedCounts: () => new Map(),
      checkedBefore: () => [],
      orphans: () => new Map(),
      nodes: () => new Map(),
      failedLogins: () => new Map(),
      timeline: () => [],
    },
    signals: {
      pauses: () => new Map(),
      couldNotAskCounts: () => new Map(),
      suspects: () => new Map(),
      alive: () => true,
    },
    contests: { contested: () => new Map() },
    locks: { checkMemos: () => new Map() },
  };
  const read = (answer: () => unknown) => () =>
    how.hangs ? new Promise(() => undefined) : how.fails ? Promise.reject(how.fails) : Promise.resolve(answer());
  return fakeCoordination(answers, read);
}

function sources(coordination: StatusSources['coordination']): StatusSources {
  const status = {
    _id: 'cache',
    contributionsError: null,
    errorSince: null,
    lastGoodAt: new Date(),
    consumers: keys.length,
  };
  return {
    store: { providerStatuses: () => Promise.resolve([status]) },
    coordination,
    providers: [{ name: 'cache', timing: { verifyEveryMs: 60_000, checkTimeoutMs: 30_000 } as never }],
  };
}

const where = (i: number) => ({
  shard: `{hf-${i}}`,
  node: () => `127.0.0.1:700${i}`,
  nodeError: () => (i === 2 ? 'connect ECONNREFUSED 127.0.0.1:7002' : null),
});

describe('the status of a sharded queue with a shard that cannot be read', () => {
  it('names the failing shard and its node once, and counts the others from what they answered', async () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:7001');
    const sharded = new ShardedCoordination([shard(0), shard(1, { fails: refused }), shard(2)], [0, 1, 2].map(where));
    const report = await statusReport(sources(sharded), new Date(), {});
    const text = formatStatus(report);
    expect(report.healthy).toBe(false);
    expect(report.unreadableShards).toEqual([
      {
        shard: '{hf-1}',
        node: '127.0.0.1:7001',
        error: 'connection refused (connect ECONNREFUSED 127.0.0.1:7001)',
        counted: false,
      },
    ]);
    expect(text.match(/\{hf-1\}/g)).toHaveLength(1);
    expect(text).toContain('queue shard {hf-1} on node 127.0.0.1:7001 cannot be read: connection refused');
    expect(text).toContain(
      `NOT HEALTHY: 0 of ${keys.filter((k) => shardOf(k, SHARDS) !== 1).length} consumers not served; 1 queue shard could not be read`,
    );
    expect(text).not.toContain('has forgotten every job');
    expect(text).not.toContain('have no record yet');
    const answered = keys.filter((k) => shardOf(k, SHARDS) !== 1).length;
    expect(report.providers[0]!.consumers).toBe(answered);
    expect(report.providers[0]!.problems).toEqual([]);
  });

  it('names a shard that does not answer within its wait, and answers on time', async () => {
    const sharded = new ShardedCoordination([shard(0), shard(1), shard(2, { hangs: true })], [0, 1, 2].map(where));
    const report = await statusReport(sources(sharded), new Date(), {
      shardWaits: { perReadMs: 50, until: Date.now() + 5_000 },
    });
    expect(report.unreadableShards.map((s) => [s.shard, s.node, s.error])).toEqual([
      [
        '{hf-2}',
        '127.0.0.1:7002',
        'did not answer within 1s (its node: connection refused (connect ECONNREFUSED 127.0.0.1:7002))',
      ],
    ]);
    expect(report.healthy).toBe(false);
  });

  it('answers on time when the old connections, kept beside the shards, do not answer', async () => {
    const sharded = new ShardedCoordination([shard(0), shard(1), shard(2)], [0, 1, 2].map(where));
    const hanging: StatusSources = {
      ...sources(sharded),
      oldConnections: { oldConnections: () => new Promise(() => undefined) } as never,
    };
    const late = Symbol('late');
    const report = await Promise.race([
      statusReport(hanging, new Date(), { shardWaits: { perReadMs: 50, until: Date.now() + 200 } }),
      new Promise<typeof late>((resolve) => setTimeout(() => resolve(late), 5_000)),
    ]);
    expect(report).not.toBe(late);
    expect(report === late ? null : report.healthy).toBe(true);
  });

  it('still says the queue forgot every job when a shard that answered has lost its sentinel', async () => {
    const base = shard(0);
    const forgot = {
      ...base,
      signals: { ...base.signals, alive: () => Promise.resolve(false) },
      notes: { ...base.notes, allStates: () => Promise.resolve({ states: {}, unsealed: [] }) },
    };
    const sharded = new ShardedCoordination(
      [forgot, shard(1, { fails: new Error('Command timed out') }), shard(2)],
      [0, 1, 2].map(where),
    );
    const report = await statusReport(sources(sharded), new Date(), {});
    expect(report.problems.filter((line) => line.includes('has forgotten every job'))).toHaveLength(1);
    expect(report.unreadableShards.map((s) => s.error)).toEqual(['timed out (Command timed out)']);
  });

  it('with every shard answering, is green and names none', async () => {
    const sharded = new ShardedCoordination([shard(0), shard(1), shard(2)], [0, 1, 2].map(where));
    const report = await statusReport(sources(sharded), new Date(), {});
    expect(report.unreadableShards).toEqual([]);
    expect(report.healthy).toBe(true);
  });
});

describe('keySlot', () => {
  it("is Redis Cluster's: CRC16/XMODEM of the hash tag, mod 16384", () => {
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('{holdfast}:consumers:wait')).toBe(8121);
    expect(keySlot('{}x')).toBe(10595);
  });
});
