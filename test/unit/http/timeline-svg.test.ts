/** The timelines as pictures: given events, the marks a person sees, on a 24 h UTC axis, with names escaped. */
import { describe, expect, it } from 'vitest';
import { PAGE_CSP, statusPage } from '../../../src/http/status-page.js';
import {
  consumerTimelineSvg,
  providerTimelineSvg,
  unservedSpans,
  unservedSteps,
} from '../../../src/http/timeline-svg.js';
import type { TimelineEvent } from '../../../src/queue/timeline-event.js';
import type { StatusReport } from '../../../src/status/status-report.js';

const now = Date.parse('2026-12-01T13:20:00Z');
const min = 60_000;
const ev = (
  kind: TimelineEvent['kind'],
  key: string,
  at: number,
  extra: Partial<TimelineEvent> = {},
): TimelineEvent => ({
  at,
  kind,
  key,
  state: kind === 'healed' ? 'held' : kind === 'brake' ? 'backoff' : 'lost',
  reason: kind === 'lost' ? 'missing' : null,
  ...extra,
});

/** A cache restart 2 h ago: three consumers lost, healed within seconds; one braked an hour ago. */
const restart = [
  ev('lost', 'cache/a', now - 120 * min),
  ev('lost', 'cache/b', now - 120 * min + 100),
  ev('lost', 'cache/c', now - 120 * min + 200),
  ev('healed', 'cache/a', now - 120 * min + 2000, { tookMs: 2000 }),
  ev('healed', 'cache/b', now - 120 * min + 2500, { tookMs: 2400 }),
  ev('healed', 'cache/c', now - 120 * min + 3000, { tookMs: 2800 }),
  ev('brake', 'cache/d', now - 60 * min),
];

const attrs = (svg: string, name: string) => [...svg.matchAll(new RegExp(`${name}="([^"]*)"`, 'g'))].map((m) => m[1]!);

describe('a provider timeline', () => {
  it('counts the consumers not served back from now: a dip of three, healed', () => {
    const steps = unservedSteps(restart, 0, now);
    expect(steps.map(([, c]) => c)).toEqual([0, 1, 2, 3, 2, 1, 0]);
    expect(unservedSteps([ev('lost', 'cache/a', now - min)], 1, now).map(([, c]) => c)).toEqual([0, 1]);
  });

  it('draws the dip as a bar of three, the heals and the brake as marks, with their details', () => {
    const svg = providerTimelineSvg('cache', restart, 0, now);
    expect(attrs(svg, 'data-unserved')).toEqual(['3']);
    expect(svg).toMatch(
      /<g data-kind="healed" data-count="3"[^>]*><title>3 healed\n2026-12-01T11:20:02Z cache\/a healed after 2\.0 s/,
    );
    expect(svg).toMatch(
      /<g data-kind="lost" data-count="3"[^>]*><title>3 lost\n2026-12-01T11:20:00Z cache\/a not served \(lost\): missing/,
    );
    expect(svg).toMatch(
      /<g data-kind="brake" data-count="1"[^>]*><title>1 brake engaged\n2026-12-01T12:20:00Z cache\/d brake engaged/,
    );
  });

  it('labels the axis in UTC hours, every 3 h over the last 24', () => {
    const svg = providerTimelineSvg('cache', [], 0, now);
    expect([...svg.matchAll(/<text[^>]*data-tick>([^<]*)</g)].map((m) => m[1])).toEqual([
      '15:00',
      '18:00',
      '21:00',
      '00:00',
      '03:00',
      '06:00',
      '09:00',
      '12:00',
    ]);
    expect(svg).toContain('>UTC</text>');
    expect(attrs(svg, 'data-unserved')).toEqual([]);
    expect(svg).not.toContain('data-kind');
  });

  it('shows consumers still not served up to now, and draws nothing older than 24 h', () => {
    const svg = providerTimelineSvg('cache', [ev('lost', 'cache/a', now - 30 * min)], 1, now);
    const xs = [...svg.matchAll(/<rect data-unserved="1" x="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(xs.length).toBeGreaterThan(1);
    expect(Math.max(...xs)).toBeGreaterThan(700);
  });

  it('draws a node event seen a moment after the page is drawn at its right edge, and none older than its span', () => {
    const words = 'cache: node 127.0.0.1:6379 restarted (new run id): 250 consumers made suspect';
    const later = providerTimelineSvg('cache', [], 0, now, '1h', [{ at: now + 50, words }]);
    expect(later.match(/data-kind="node-event"/g)).toHaveLength(1);
    const old = providerTimelineSvg('cache', [], 0, now, '1h', [{ at: now - 2 * 60 * min, words }]);
    expect(old).not.toContain('data-kind="node-event"');
  });

  it('escapes names and reasons', () => {
    const svg = providerTimelineSvg(
      '<cache&"x">',
      [ev('lost', '<cache&"x">/<b>', now - min, { reason: '<script>alert(1)</script>' })],
      1,
      now,
    );
    expect(svg).not.toMatch(/<script|<b>|<cache/);
    expect(svg).toContain('data-provider="&lt;cache&amp;&quot;x&quot;&gt;"');
    expect(svg).toContain(
      '&lt;cache&amp;&quot;x&quot;&gt;/&lt;b&gt; not served (lost): &lt;script&gt;alert(1)&lt;/script&gt;',
    );
  });
});

describe("a consumer's timeline", () => {
  it('draws its spans not served, from its loss to its heal, and its marks', () => {
    const own = [
      ev('lost', 'cache/a', now - 120 * min),
      ev('healed', 'cache/a', now - 110 * min, { tookMs: 10 * min }),
      ev('lost', 'cache/a', now - 5 * min),
    ];
    expect(unservedSpans(own, now)).toEqual([
      [now - 120 * min, now - 110 * min],
      [now - 5 * min, now],
    ]);
    const svg = consumerTimelineSvg('cache/a', own, now);
    expect(attrs(svg, 'data-unserved-from')).toEqual([String(now - 120 * min), String(now - 5 * min)]);
    expect(svg).toMatch(
      /data-kind="healed" data-count="1"[^>]*><title>1 healed\n[^\n]* cache\/a healed after 10\.0 min/,
    );
  });

  it('starts a span at the heal minus its time when the loss came before the window', () => {
    expect(unservedSpans([ev('healed', 'cache/a', now - min, { tookMs: 2 * min })], now)).toEqual([
      [now - 3 * min, now - min],
    ]);
    expect(unservedSpans([ev('healed', 'cache/a', now - min, { tookMs: 48 * 60 * min })], now)).toEqual([
      [now - 24 * 60 * min, now - min],
    ]);
  });
});

describe('the pages', () => {
  const report: StatusReport = {
    at: new Date(now).toISOString(),
    healthy: true,
    problems: [],
    providers: [
      {
        provider: 'cache',
        healthy: true,
        consumers: 3,
        declared: 3,
        states: { held: 3 },
        contributionsError: null,
        paused: null,
        lastCheckAt: null,
        couldNotAsk: 0,
        problems: [],
        contested: { count: 0, consumers: [] },
      },
    ],
    total: 3,
    unserved: 0,
    listing: 'all',
    consumers: [],
  } as unknown as StatusReport;

  it("put each provider's picture on the status page, and say when they cannot be read", () => {
    expect(statusPage(report, {}, [], new Map([['cache', restart]]))).toMatch(
      /<h3>cache<\/h3><svg class="timeline"[^>]*data-provider="cache"/,
    );
    expect(statusPage(report, {}, [], null)).toContain('The timelines could not be read');
  });

  it("need no script or style beyond the pages' own (presentation attributes only)", () => {
    const html = statusPage(report, {}, [], new Map([['cache', restart]]));
    const svg = html.slice(html.indexOf('<svg'), html.lastIndexOf('</svg>'));
    expect(svg).not.toMatch(/<script|\sstyle=|\son\w+=/);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
  });
});
