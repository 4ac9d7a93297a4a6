import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/logging/logger.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { FirstApplyReports, PROGRESS_EVERY_MS } from '../../../src/status/first-apply-reports.js';

interface Line {
  msg: string;
  applied?: number;
  perSecond?: number | null;
  leftS?: number | null;
}

function watched(declared: number) {
  const lines: Line[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  const counts = { asked: 0 };
  const reports = new FirstApplyReports({
    notes: { askedCounts: (names) => Promise.resolve(new Map(names.map((n) => [n, counts.asked]))) },
    declared: () => new Map([['cache', declared]]),
    logger: createLogger({ level: 'info', format: 'json', scrubber: new Scrubber(), destination: sink }),
  });
  return { lines, counts, reports };
}

describe('first applies said as progress', () => {
  afterEach(() => vi.useRealTimers());

  it('says a line as they move, none while they do not, and one when they are done', async () => {
    vi.useFakeTimers();
    const { lines, counts, reports } = watched(100);
    reports.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.map((l) => l.msg)).toEqual(['first applies of cache: 0 of 100 declared consumers applied (0.0 %)']);

    counts.asked = 50;
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(lines.at(-1)).toMatchObject({ applied: 50, perSecond: 10, leftS: 5 });
    expect(lines.at(-1)?.msg).toBe(
      'first applies of cache: 50 of 100 declared consumers applied (50.0 %), 10/s, about 5 s left',
    );

    // nothing moved: nothing said
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS * 3);
    expect(lines).toHaveLength(2);

    counts.asked = 100;
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS);
    expect(lines.at(-1)?.msg).toBe(
      'first applies of cache done: all 100 declared consumers applied (100 in 25 s, 4/s)',
    );
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS * 3);
    expect(lines).toHaveLength(3);
    await reports.stop();
  });

  it('says nothing when every declared consumer is applied already', async () => {
    vi.useFakeTimers();
    const { lines, counts, reports } = watched(100);
    counts.asked = 100;
    reports.start();
    await vi.advanceTimersByTimeAsync(PROGRESS_EVERY_MS * 3);
    expect(lines).toEqual([]);
    await reports.stop();
  });
});
