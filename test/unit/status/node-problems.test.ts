/** A backend of several nodes: the status names each node a worker noted not answering, and trusts no forged note. */
import { describe, expect, it } from 'vitest';
import type { NodesNote } from '../../../src/queue/coordination.js';
import { decodeJson, nodesNoteCodec } from '../../../src/queue/coordination/values.js';
import { statusReport, type StatusSources } from '../../../src/status/status-report.js';
import { fakeCoordination } from '../../support/coordination-fake.js';

const now = new Date('2026-12-02T07:00:00Z');

function sources(note: NodesNote | undefined): StatusSources {
  const coordination = fakeCoordination({
    notes: {
      allStates: () => ({ states: { 'cache/a': 'held 1' }, unsealed: [] }),
      briefsOf: () => new Map(),
      lastCheckedAt: () => new Map([['cache', now.getTime()]]),
      askedCounts: () => new Map(),
      checkedBefore: () => [],
      orphans: () => new Map(),
      nodes: () => new Map(note ? [['cache', note]] : []),
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
  });
  const status = { _id: 'cache', contributionsError: null, errorSince: null, lastGoodAt: now, consumers: 1 };
  return {
    store: { providerStatuses: () => Promise.resolve([status]) },
    coordination,
    providers: [{ name: 'cache', timing: { verifyEveryMs: 60_000, checkTimeoutMs: 30_000 } as never }],
  };
}

const node = (address: string, role: 'master' | 'replica', answering: boolean) => ({
  address,
  role,
  answering,
  ...(answering ? {} : { since: '2026-12-02T06:59:30.000Z', why: 'timed out' }),
});

describe('the status of a backend of several nodes', () => {
  it('is red naming a node that cannot be asked, with its role and since when, and lists every node', async () => {
    const report = await statusReport(
      sources({
        at: now.toISOString(),
        nodes: [node('10.0.0.1:6379', 'master', true), node('10.0.0.2:6379', 'replica', false)],
      }),
      now,
    );
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.problems).toEqual([
      'node 10.0.0.2:6379 (replica) cannot be asked since 2026-12-02T06:59:30.000Z (30s ago): timed out; its consumers stay held on the nodes that answer',
    ]);
    expect(report.providers[0]!.nodes).toEqual([
      { address: '10.0.0.1:6379', role: 'master', answers: true, missing: 0 },
      { address: '10.0.0.2:6379', role: 'replica', answers: false, missing: 0 },
    ]);
  });

  it('is red naming a node that answers but lacks consumers, with how many and why, and green once it lacks none', async () => {
    const lacking = {
      ...node('10.0.0.2:6379', 'replica', true),
      missing: 3,
      missingWhy: 'applying there failed (NOPERM)',
    };
    const report = await statusReport(
      sources({ at: now.toISOString(), nodes: [node('10.0.0.1:6379', 'master', true), lacking] }),
      now,
    );
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.problems).toEqual([
      'node 10.0.0.2:6379 (replica) lacks 3 consumers: applying there failed (NOPERM)',
    ]);
    expect(report.providers[0]!.nodes[1]).toEqual({
      address: '10.0.0.2:6379',
      role: 'replica',
      answers: true,
      missing: 3,
    });
    const healed = await statusReport(
      sources({ at: now.toISOString(), nodes: [node('10.0.0.1:6379', 'master', true), { ...lacking, missing: 0 }] }),
      now,
    );
    expect(healed.healthy).toBe(true);
  });

  it('is green when every node answers, and leaves a backend of one node to the pause and could-not-ask lines', async () => {
    expect(
      (
        await statusReport(
          sources({
            at: now.toISOString(),
            nodes: [node('10.0.0.1:6379', 'master', true), node('10.0.0.2:6379', 'replica', true)],
          }),
          now,
        )
      ).healthy,
    ).toBe(true);
    expect(
      (await statusReport(sources({ at: now.toISOString(), nodes: [node('10.0.0.1:6379', 'master', false)] }), now))
        .healthy,
    ).toBe(true);
    expect((await statusReport(sources(undefined), now)).providers[0]!.nodes).toEqual([]);
  });

  it('takes a forged note (a control character in an address, too many nodes) for none', () => {
    const forged = {
      at: now.toISOString(),
      nodes: [{ address: '\u001b[2J10.0.0.9:6379', role: 'replica', answering: false }],
    };
    expect(decodeJson(nodesNoteCodec, JSON.stringify(forged))).toBeNull();
    const many = {
      at: now.toISOString(),
      nodes: Array.from({ length: 300 }, (_, i) => ({
        address: `10.0.${i >> 8}.${i & 255}:6379`,
        role: 'replica',
        answering: true,
      })),
    };
    expect(decodeJson(nodesNoteCodec, JSON.stringify(many))).toBeNull();
    const negative = {
      at: now.toISOString(),
      nodes: [{ address: '10.0.0.9:6379', role: 'replica', answering: true, missing: -1 }],
    };
    expect(decodeJson(nodesNoteCodec, JSON.stringify(negative))).toBeNull();
    const long = {
      at: now.toISOString(),
      nodes: [{ address: '10.0.0.9:6379', role: 'replica', answering: true, missing: 1, missingWhy: 'x'.repeat(501) }],
    };
    expect(decodeJson(nodesNoteCodec, JSON.stringify(long))).toBeNull();
  });
});
