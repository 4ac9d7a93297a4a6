/**
 * A page's timelines are read within a deadline: a queue Redis that does not answer, or fails, leaves the page without
 * them, never hung.
 */
import { describe, expect, it } from 'vitest';
import { readTimelines } from '../../../src/history/timeline-read.js';

describe('reading the timelines for a page', () => {
  it('gives each provider its events', async () => {
    const seen: number[] = [];
    const read = await readTimelines(
      { timeline: (_p, since) => (seen.push(since), Promise.resolve([])) },
      ['cache', 'ledger'],
      100_000_000,
    );
    expect([...(read ?? new Map()).keys()]).toEqual(['cache', 'ledger']);
    expect(seen).toEqual([100_000_000 - 86_400_000, 100_000_000 - 86_400_000]);
  });

  it('gives up at its deadline, or when the read fails', async () => {
    await expect(
      readTimelines({ timeline: () => new Promise(() => undefined) }, ['cache'], Date.now(), 50),
    ).resolves.toBeNull();
    await expect(
      readTimelines({ timeline: () => Promise.reject(new Error('Connection is closed.')) }, ['cache'], Date.now()),
    ).resolves.toBeNull();
  });
});
