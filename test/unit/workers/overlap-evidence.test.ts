/**
 * A rotation cut over on evidence: once `rotationOverlap` has run, its old password is kept while a connection from
 * before the rotation remains or a failed login was seen since, dropped when neither, or at `rotationOverlapMax`.
 */
import { describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../../src/config/config.js';
import type { FailedLoginsSince } from '../../../src/queue/failed-logins-since.js';
import type { OldConnections } from '../../../src/queue/rotation-notes.js';
import { overlapEvidence, type FailedLoginsOf } from '../../../workers/overlap-evidence.js';
import type { ProviderRuntime } from '../../../workers/provider-runtime.js';

const at = Date.UTC(2026, 11, 7, 6, 5, 2);
const provider = {
  config: { name: 'cache', rotationOverlapMs: 60_000, rotationOverlapMaxMs: 3_600_000 } as unknown as ProviderConfig,
} as unknown as ProviderRuntime;
const listed = (count: number, more: Partial<OldConnections> = {}): OldConnections => ({
  login: 'app_photos',
  at,
  listedAt: at + 70_000,
  count,
  addresses: count > 0 ? ['10.0.0.7:5123'] : [],
  ...more,
});

/** What the failed-logins watch noted: `n` since the rotation, or nothing known (no note, entries lost). */
const failing =
  (n: number | 'unknown'): FailedLoginsOf =>
  () =>
    Promise.resolve<FailedLoginsSince>(
      n === 'unknown'
        ? { count: 0, addresses: [], lastAt: null, known: false }
        : { count: n, addresses: n > 0 ? ['10.0.0.7'] : [], lastAt: n > 0 ? at + 1 : null, known: true },
    );

function evidence(found: OldConnections | undefined, failed: FailedLoginsOf = failing('unknown')) {
  const cut: number[] = [];
  const notes = {
    oldConnectionsOf: () => Promise.resolve(found),
    noteCutover: (_p: string, _k: string, when: number) => Promise.resolve(void cut.push(when)),
  };
  return { evidence: overlapEvidence(notes, failed), cut };
}

const verdictOf = (found: OldConnections | undefined, now: number, failed?: FailedLoginsOf) =>
  evidence(found, failed).evidence.verdict(provider, 'cache/photos', 'app_photos', now);

describe('overlapEvidence', () => {
  it('keeps the overlap while a connection from before the rotation remains, naming it', async () => {
    expect(await verdictOf(listed(2), at + 120_000)).toEqual({
      kind: 'held',
      why: '2 connections from before the rotation at 06:05:02 UTC (10.0.0.7:5123, …)',
    });
  });

  it('keeps it while a failed login was seen since the rotation, and not for failures it cannot know', async () => {
    expect(await verdictOf(listed(0), at + 120_000, failing(3))).toEqual({
      kind: 'held',
      why: '3 failed login(s) since the rotation at 06:05:02 UTC',
    });
    expect((await verdictOf(listed(0), at + 120_000, failing('unknown'))).kind).toBe('cut');
  });

  it('cuts over when neither, saying so', async () => {
    expect(await verdictOf(listed(0), at + 120_000, failing(0))).toEqual({
      kind: 'cut',
      why: 'rotation overlap ended on evidence: no connection from before the rotation at 06:05:02 UTC remains and no failed login since',
    });
  });

  it('cuts over at rotationOverlapMax whatever remains', async () => {
    expect(await verdictOf(listed(1), at + 3_600_000, failing(5))).toEqual({
      kind: 'cut',
      why: 'rotation overlap ended at rotationOverlapMax (1h after the rotation at 06:05:02 UTC): 1 connection from before the rotation at 06:05:02 UTC (10.0.0.7:5123) still open',
    });
  });

  it('knows nothing without a listing, once cut over, or of another login: the overlap ends as configured', async () => {
    expect(await verdictOf(undefined, at + 120_000)).toEqual({ kind: 'none' });
    expect(await verdictOf(listed(2, { cutAt: at + 100_000 }), at + 120_000)).toEqual({ kind: 'none' });
    expect(await verdictOf(listed(2, { login: 'app_other' }), at + 120_000)).toEqual({ kind: 'none' });
  });

  it('notes the cutover', async () => {
    const { evidence: e, cut } = evidence(listed(0));
    await e.cutOver(provider, 'cache/photos', at + 5);
    expect(cut).toEqual([at + 5]);
  });
});
