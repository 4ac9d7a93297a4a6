/**
 * The status page in the middle of an incident: the node event and its draining count on the provider's row, the
 * consumers not served and the suspect ones listed (bounded, linked, escaped: their keys are written by tenants), the
 * event marked on the timeline; and `holdfast status` saying the same line with its numbers readable.
 */
import { describe, expect, it } from 'vitest';
import { LISTED, pageReasons, REASONS_LISTED } from '../../../src/http/incident-view.js';
import { readNodeEvents, SUSPECTS_LISTED, type NodeEvents } from '../../../src/http/node-event-read.js';
import { statusPage } from '../../../src/http/status-page.js';
import type { SuspectEvent, Suspects } from '../../../src/queue/coordination.js';
import { formatStatus } from '../../../src/status/format-status.js';
import type { ConsumerStatus, ProviderHealth, StatusReport } from '../../../src/status/status-report.js';

const at = '2026-12-07T06:05:40.000Z';
const event: SuspectEvent = { node: '127.0.0.1:6379', why: 'new-run-id', at: '2026-12-07T06:05:10.000Z', of: 10_000 };
const LINE = 'node 127.0.0.1:6379 restarted at 06:05:10 (new run id): 6,120 of 10,000 consumers not asked since';
const HOSTILE = '<script>alert(1)</script>&"';

function provider(suspects: Suspects | null, more: Partial<ProviderHealth> = {}): ProviderHealth {
  return {
    provider: 'cache',
    healthy: suspects === null,
    consumers: 10_000,
    declared: 10_000,
    states: { held: 10_000 },
    firstApplies: null,
    contributionsError: null,
    paused: null,
    lastCheckAt: at,
    couldNotAsk: 0,
    suspects,
    deepCheckEveryMs: null,
    nodes: [],
    problems: suspects ? [LINE] : [],
    contested: { count: 0, consumers: [] },
    ...more,
  };
}

function report(p: ProviderHealth, consumers: ConsumerStatus[] = []): StatusReport {
  return {
    at,
    healthy: p.healthy && consumers.every((c) => c.healthy),
    problems: [],
    unreadableShards: [],
    providers: [p],
    total: p.consumers,
    unserved: consumers.filter((c) => !c.healthy).length,
    listing: 'unserved',
    consumers,
  };
}

function lost(key: string): ConsumerStatus {
  return {
    consumer: key,
    provider: 'cache',
    login: 'app',
    state: 'lost',
    label: 'lost',
    healthy: false,
    since: at,
    lastCheck: null,
    nextAt: null,
    brakeCount: 0,
    reason: `missing ${HOSTILE}`,
    problem: null,
    refused: null,
  };
}

/** `n` suspects as the page's read names them: tenant-written keys, some hostile. */
const sample = (n: number) => Array.from({ length: n }, (_, i) => `cache/${i === 0 ? HOSTILE : `s${i}`}`).sort();
const events = (count: number, names: string[]): NodeEvents => new Map([['cache', { count, event, sample: names }]]);

/** The `<p>` of the list of `kind` on the page. */
function list(html: string, kind: 'unserved' | 'suspect'): string {
  return new RegExp(`<p data-list="${kind}">.*?</p>`).exec(html)?.[0] ?? '';
}

describe('the status page in the middle of an incident', () => {
  it("shows the node event and its draining count on the provider's row, with a bar of those asked", () => {
    const suspects = { count: 6120, event };
    const html = statusPage(report(provider(suspects)), {}, [`provider cache: ${LINE}`], new Map(), events(6120, []));
    expect(html).toContain('<th>node event</th>');
    expect(html).toContain(
      '<span data-node-event="suspect" data-suspects="6120"><span class="mark">node 127.0.0.1:6379 restarted at 06:05:10 (new run id)</span>: <progress value="3880" max="10000"></progress> 6,120 of 10,000 not asked since</span>',
    );
    expect(html).toContain('<p class="verdict mark" id="verdict">NOT SERVED');
  });

  it('says the event once all are asked, and what it cannot read', () => {
    const drained = statusPage(report(provider(null)), {}, [], new Map(), events(0, []));
    expect(drained).toContain(
      '<span data-node-event="asked">node 127.0.0.1:6379 restarted at 06:05:10 (new run id), 30s ago: all 10,000 asked since</span>',
    );
    // the page's own read, a moment before the report's, still counted suspects: the row says what the verdict does
    expect(statusPage(report(provider(null)), {}, [], new Map(), events(3, sample(3)))).toContain(
      '<span data-node-event="asked">node 127.0.0.1:6379 restarted at 06:05:10 (new run id), 30s ago: all 10,000 asked since</span>',
    );
    expect(drained).not.toContain('id="incident"');
    // an event when none of its consumers had been asked about yet (all just applied): not `all 0 asked`
    const none: NodeEvents = new Map([['cache', { count: 0, event: { ...event, of: 0 }, sample: [] }]]);
    expect(statusPage(report(provider(null)), {}, [], new Map(), none)).toContain(
      '(new run id), 30s ago: none of its consumers had been asked about before it</span>',
    );
    expect(statusPage(report(provider(null)), {}, [], new Map(), new Map())).toContain('<td>-</td><td>0</td>');
    const unread = statusPage(report(provider({ count: 5, event })), {}, [], new Map(), null);
    expect(unread).toContain('5 of 10,000 not asked since');
    expect(unread).toContain("<small>their names could not be read from the queue's Redis in time</small>");
  });

  it(`lists the suspect consumers, the first ${LISTED} linked to their pages, escaped, and how many more`, () => {
    // more than the page names, as a read of several shards may return
    const names = sample(SUSPECTS_LISTED + 10);
    const html = statusPage(report(provider({ count: 6120, event })), {}, [], new Map(), events(6120, names));
    const suspects = list(html, 'suspect');
    expect(suspects).toContain(
      '<span class="mark">6,120 suspect</span>, not asked since node 127.0.0.1:6379 restarted at 06:05:10 (new run id): ',
    );
    expect(suspects.match(/<a href="\/consumer\?key=/g)).toHaveLength(LISTED);
    expect(suspects).toContain('<a href="/consumer?key=cache%2Fs1">cache/s1</a>');
    expect(suspects).toContain(
      '<a href="/consumer?key=cache%2F%3Cscript%3Ealert(1)%3C%2Fscript%3E%26%22">cache/&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;</a>',
    );
    expect(suspects).toMatch(/, <span class="more">and 6,070 more<\/span><\/p>$/);
    expect(html).not.toContain('<script>alert');
    // a few left: all named, nothing more
    const few = list(
      statusPage(report(provider({ count: 3, event })), {}, [], new Map(), events(3, sample(3))),
      'suspect',
    );
    expect(few.match(/<a href=/g)).toHaveLength(3);
    expect(few).not.toContain('more');
  });

  it(`lists the consumers not served, the first ${LISTED} linked with what is wrong, and how many more`, () => {
    const unserved = Array.from({ length: 120 }, (_, i) => lost(`cache/u${String(i).padStart(3, '0')}`));
    const p = provider(null, { healthy: false, states: { held: 9880, lost: 120 } });
    const html = statusPage(report(p, unserved), {}, [], new Map(), events(0, []));
    const listed = list(html, 'unserved');
    expect(listed).toMatch(/^<p data-list="unserved"><span class="mark">120 not served<\/span>: <a href/);
    expect(listed.match(/<a href=/g)).toHaveLength(LISTED);
    expect(listed).toContain(
      '<a href="/consumer?key=cache%2Fu000" title="missing &lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;">cache/u000</a>',
    );
    expect(listed).not.toContain('cache/u050');
    expect(listed).toMatch(/cache\/u049<\/a>, <span class="more">and 70 more<\/span><\/p>$/);
    expect(html).not.toContain('<script>alert');
  });

  it(`says under the verdict every provider's line and the first ${REASONS_LISTED} consumers' own, then how many more`, () => {
    const unserved = Array.from({ length: 120 }, (_, i) => lost(`cache/u${String(i).padStart(3, '0')}`));
    const p = provider({ count: 6120, event }, { healthy: false, states: { held: 9880, lost: 120 } });
    const reasons = pageReasons(report(p, unserved));
    expect(reasons).toHaveLength(1 + REASONS_LISTED + 1);
    expect(reasons[0]).toBe(`provider cache: ${LINE}`);
    expect(reasons[1]).toBe(`cache/u000: lost (missing ${HOSTILE})`);
    expect(reasons.at(-1)).toBe('… and 110 more consumers not served: listed below');
    const html = statusPage(report(p, unserved), {}, reasons, new Map(), events(6120, []));
    expect(html.match(/<ul class="reasons">.*?<\/ul>/)?.[0].match(/<li>/g)).toHaveLength(12);
    expect(html).not.toContain('<script>alert');
    // a few: every one said
    expect(pageReasons(report(p, unserved.slice(0, 3)))).toHaveLength(4);
  });

  it('marks the node event on the timeline, and shows the last hour by default while it is in it', () => {
    const html = statusPage(
      report(provider({ count: 6120, event })),
      { startedAt: Date.parse(at) - 86_400_000 },
      [],
      new Map(),
      events(6120, []),
    );
    expect(html).toContain('<h2>Last hour</h2>');
    expect(html).toMatch(
      /<g data-kind="node-event" data-at="1796623510000"><title>cache: node 127\.0\.0\.1:6379 restarted at 06:05:10 \(new run id\): 10,000 consumers made suspect<\/title><line /,
    );
    // a day later, on the 24 h axis, still marked; older, gone
    const dayLater = { ...report(provider(null)), at: '2026-12-08T05:00:00.000Z' };
    expect(statusPage(dayLater, {}, [], new Map(), events(0, []))).toContain('data-kind="node-event"');
    const older = { ...report(provider(null)), at: '2026-12-08T07:00:00.000Z' };
    expect(statusPage(older, {}, [], new Map(), events(0, []))).not.toContain('data-kind="node-event"');
  });
});

describe('`holdfast status` in the middle of an incident', () => {
  it('says the node event after its provider, its numbers with separators', () => {
    const text = formatStatus({ ...report(provider({ count: 6120, event })), unserved: 0 });
    expect(text).toContain('provider cache: 10,000 consumers (10,000 held), 10,000 declared');
    expect(text).toContain(`NOT HEALTHY: 0 of 10,000 consumers not served\n  provider cache: ${LINE}`);
  });
});

describe("the page's read of the node events", () => {
  it(`reads at most ${SUSPECTS_LISTED} suspects of a provider that has any, none of one that has none`, async () => {
    const asked: Array<[string, number]> = [];
    const read = await readNodeEvents(
      {
        suspects: () =>
          Promise.resolve(
            new Map([
              ['cache', { count: 6120, event }],
              ['ledger', { count: 0, event: null }],
            ]),
          ),
        suspectSample: (p, max) => {
          asked.push([p, max]);
          return Promise.resolve(['cache/b', 'cache/a', 'cache/b']);
        },
      },
      ['cache', 'ledger'],
    );
    expect(asked).toEqual([['cache', SUSPECTS_LISTED]]);
    expect(read?.get('cache')).toEqual({ count: 6120, event, sample: ['cache/a', 'cache/b'] });
    expect(read?.get('ledger')).toEqual({ count: 0, event: null, sample: [] });
  });

  it('is null when the queue’s Redis does not answer in time or fails, never hung', async () => {
    const never = { suspects: () => new Promise<never>(() => {}), suspectSample: () => Promise.resolve([]) };
    expect(await readNodeEvents(never, ['cache'], 20)).toBeNull();
    const fails = { suspects: () => Promise.reject(new Error('down')), suspectSample: () => Promise.resolve([]) };
    expect(await readNodeEvents(fails, ['cache'], 20)).toBeNull();
  });
});
