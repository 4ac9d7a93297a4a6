/** What `/metrics` shows when scraped, from sources in memory: the gauges the alert rules read. */
import { describe, expect, it } from 'vitest';
import { Metrics, scrapeDeadlineMs } from '../../../src/metrics/metrics.js';
import {
  countStates,
  type QueueFacts,
  type ScrapeSources,
  type StoreFacts,
} from '../../../src/metrics/scrape-sources.js';

const facts: QueueFacts = {
  consumers: [
    { provider: 'cache', state: 'held', count: 2 },
    { provider: 'cache', state: 'backoff', count: 1 },
  ],
  unserved: [
    {
      provider: 'cache',
      consumer: 'cache/photos',
      login: 'app_photos',
      state: 'backoff',
      since: 1_700_000_000_000,
      brakeCount: 3,
    },
  ],
  queueDepth: { delayed: 3, waiting: 0 },
  dueWaits: { scheduled: 3, due: 1 },
  lastCheckAt: new Map([['cache', 1_700_000_100_000]]),
  orphans: new Map([['cache', 2]]),
  contested: new Map([['cache', 1]]),
  suspects: new Map([
    [
      'cache',
      {
        count: 4,
        event: { node: '127.0.0.1:6379', why: 'new-run-id' as const, at: '2026-12-07T06:05:10.000Z', of: 10 },
      },
    ],
    [
      'ledger',
      {
        count: 0,
        event: {
          node: '127.0.0.1:5432',
          why: 'new-system-id' as const,
          at: '2026-12-07T06:00:00.000Z',
          of: 3,
          asked: '2026-12-07T06:00:02.500Z',
        },
      },
    ],
  ]),
};

function sources(over: Partial<ScrapeSources> = {}): ScrapeSources {
  return {
    providers: [{ name: 'cache', verifyEveryMs: 60_000, checkTimeoutMs: 30_000 }],
    queue: () => Promise.resolve(facts),
    store: (): Promise<StoreFacts> => Promise.resolve({ heldRemovals: new Map([['cache', 7]]) }),
    storeUp: () => true,
    ...over,
  };
}

async function scraped(metrics: Metrics, deadlineMs?: number): Promise<string[]> {
  return (await metrics.text(deadlineMs))
    .split('\n')
    .filter((l) => l.startsWith('holdfast_') && !l.startsWith('holdfast_process_'));
}

describe('the gauges read when scraped', () => {
  it('show the consumers by state, the unserved by name and since when, intervals, last checks, orphans, contested and suspect consumers and held-back removals', async () => {
    const metrics = new Metrics();
    metrics.scrapeFrom(sources());
    expect(await scraped(metrics)).toEqual(
      expect.arrayContaining([
        'holdfast_consumers{provider="cache",state="held"} 2',
        'holdfast_consumer_unserved_since_timestamp_seconds{provider="cache",consumer="cache/photos",login="app_photos",state="backoff"} 1700000000',
        'holdfast_consumer_brake_count{provider="cache",consumer="cache/photos",login="app_photos"} 3',
        'holdfast_verify_interval_seconds{provider="cache"} 60',
        'holdfast_due_waits{state="scheduled"} 3',
        'holdfast_due_waits{state="due"} 1',
        'holdfast_check_timeout_seconds{provider="cache"} 30',
        'holdfast_last_check_timestamp_seconds{provider="cache"} 1700000100',
        'holdfast_orphan_logins{provider="cache"} 2',
        'holdfast_contested_consumers{provider="cache"} 1',
        'holdfast_suspect_consumers{provider="cache",node="127.0.0.1:6379"} 4',
        'holdfast_suspect_event_timestamp_seconds{provider="cache",node="127.0.0.1:6379",why="new-run-id"} 1796623510',
        'holdfast_suspect_consumers{provider="ledger",node="127.0.0.1:5432"} 0',
        'holdfast_suspect_asked_seconds{provider="ledger",node="127.0.0.1:5432"} 2.5',
        'holdfast_removals_held_back{provider="cache"} 7',
        'holdfast_queue_jobs{state="delayed"} 3',
        'holdfast_store_up 1',
        'holdfast_queue_up 1',
      ]),
    );
  });

  it("show each provider's deep-check interval for its consumers as counted in the scrape, across every state", async () => {
    const metrics = new Metrics();
    const seen: number[] = [];
    const deepCheckEveryMs = (consumers: number) => (seen.push(consumers), consumers * 1000);
    metrics.scrapeFrom(
      sources({ providers: [{ name: 'cache', verifyEveryMs: 60_000, checkTimeoutMs: 30_000, deepCheckEveryMs }] }),
    );
    expect(await scraped(metrics)).toContain('holdfast_deep_check_interval_seconds{provider="cache"} 3');
    expect(seen).toEqual([3]);
  });

  it('drop a consumer once it is served again', async () => {
    let now = facts;
    const metrics = new Metrics();
    metrics.scrapeFrom(sources({ queue: () => Promise.resolve(now) }));
    expect((await scraped(metrics)).some((l) => l.includes('cache/photos'))).toBe(true);
    now = { ...facts, unserved: [], consumers: [{ provider: 'cache', state: 'held', count: 3 }] };
    const lines = await scraped(metrics);
    expect(lines.filter((l) => l.includes('cache/photos'))).toEqual([]);
    expect(lines).toContain('holdfast_consumers{provider="cache",state="held"} 3');
    expect(lines.filter((l) => l.includes('state="backoff"'))).toEqual([]);
  });

  it("say the queue's Redis is down when it does not answer within the deadline, keep its last answer, and do not ask again meanwhile", async () => {
    let asked = 0;
    let answer: Promise<QueueFacts> = Promise.resolve(facts);
    const metrics = new Metrics();
    metrics.scrapeFrom(sources({ queue: () => (asked++, answer), storeUp: () => false }));
    await scraped(metrics);
    answer = new Promise(() => undefined); // frozen
    const started = Date.now();
    const first = await scraped(metrics, 200);
    await scraped(metrics, 200);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(first).toContain('holdfast_queue_up 0');
    expect(first).toContain('holdfast_store_up 0');
    expect(first).toContain('holdfast_consumers{provider="cache",state="held"} 2');
    expect(first).toContain(
      'holdfast_consumer_brake_count{provider="cache",consumer="cache/photos",login="app_photos"} 3',
    );
    expect(asked).toBe(2);
  });

  it('say the queue is down when its read fails', async () => {
    const metrics = new Metrics();
    metrics.scrapeFrom(sources({ queue: () => Promise.reject(new Error('ECONNREFUSED')) }));
    expect(await scraped(metrics)).toContain('holdfast_queue_up 0');
  });

  it("take the scraper's timeout, less a margin, as their deadline", () => {
    expect(scrapeDeadlineMs('1')).toBe(750);
    expect(scrapeDeadlineMs('10')).toBe(3000);
    expect(scrapeDeadlineMs(undefined)).toBe(3000);
    expect(scrapeDeadlineMs('soon')).toBe(3000);
    expect(scrapeDeadlineMs('0.2')).toBe(100);
  });
});

describe('consumers counted for the scrape', () => {
  it('counts every state and names the unserved, the first 20 by key per provider and state', () => {
    const states: Record<string, string> = {
      'cache/held': 'held 3',
      'cache/refused': 'held! 2',
      'ledger/x': 'blocked 1',
    };
    for (let i = 0; i < 30; i++) states[`cache/l${String(29 - i).padStart(2, '0')}`] = `lost ${i}`;
    const { counts, listed } = countStates(states);
    expect(counts).toEqual(
      expect.arrayContaining([
        { provider: 'cache', state: 'held', count: 2 },
        { provider: 'cache', state: 'lost', count: 30 },
        { provider: 'ledger', state: 'blocked', count: 1 },
      ]),
    );
    expect([...listed].sort()).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `cache/l${String(i).padStart(2, '0')}`),
      'ledger/x',
    ]);
  });
});
