/**
 * The timelines at the scale of an incident: the last hour spreads a restart's losses and heals that the 24 h axis
 * puts in one pixel column; nothing older than the hour is drawn on it (a loss before it still counts); the page's
 * scale is `1h` or `24h` and nothing else, by default the hour when something happened in it or the run is young.
 */
import { describe, expect, it } from 'vitest';
import { statusPage } from '../../../src/http/status-page.js';
import { chosenScale, defaultScale } from '../../../src/http/timeline-scale.js';
import {
  consumerTimelineSvg,
  providerTimelineSvg,
  unservedSpans,
  unservedSteps,
} from '../../../src/http/timeline-svg.js';
import type { TimelineEvent } from '../../../src/queue/timeline-event.js';
import type { StatusReport } from '../../../src/status/status-report.js';

const now = Date.parse('2026-12-01T13:20:00Z');
const s = 1000;
const min = 60 * s;
const hour = 60 * min;
const ev = (kind: TimelineEvent['kind'], key: string, at: number, tookMs?: number): TimelineEvent => ({
  at,
  kind,
  key,
  state: kind === 'healed' ? 'held' : 'lost',
  reason: kind === 'lost' ? 'missing' : null,
  ...(tookMs === undefined ? {} : { tookMs }),
});

/** A cache restart 10 min ago: three consumers lost at once, healed 20, 40 and 60 s later. */
const restart = [
  ev('lost', 'cache/a', now - 10 * min),
  ev('lost', 'cache/b', now - 10 * min + 100),
  ev('lost', 'cache/c', now - 10 * min + 200),
  ev('healed', 'cache/a', now - 10 * min + 20 * s, 20 * s),
  ev('healed', 'cache/b', now - 10 * min + 40 * s, 40 * s),
  ev('healed', 'cache/c', now - 10 * min + 60 * s, 60 * s),
];

const ticks = (svg: string) => [...svg.matchAll(/<text[^>]*data-tick>([^<]*)</g)].map((m) => m[1]);
const counts = (svg: string, kind: string) =>
  [...svg.matchAll(new RegExp(`data-kind="${kind}" data-count="(\\d+)"`, 'g'))].map((m) => Number(m[1]));

describe('the scale chosen', () => {
  it('is 1h or 24h, none when absent or empty, and anything else refused', () => {
    expect(chosenScale(undefined)).toBeUndefined();
    expect(chosenScale('')).toBeUndefined();
    expect(chosenScale('1h')).toBe('1h');
    expect(chosenScale('24h')).toBe('24h');
    for (const refused of [
      '2h',
      '1H',
      ' 1h',
      '1h ',
      '60m',
      '__proto__',
      'toString',
      ['1h', '24h'],
      ['1h'],
      { 1: 'h' },
      1,
    ])
      expect(chosenScale(refused)).toBeNull();
  });

  it('is by default the last hour when something happened in it or the run is young, else the 24 h', () => {
    expect(defaultScale(restart, now)).toBe('1h');
    expect(defaultScale([ev('lost', 'cache/a', now - 2 * hour)], now)).toBe('24h');
    expect(defaultScale([], now)).toBe('24h');
    expect(defaultScale([], now, now - 10 * min)).toBe('1h');
    expect(defaultScale([ev('lost', 'cache/a', now - 2 * hour)], now, now - 2 * 24 * hour)).toBe('24h');
  });
});

describe('a timeline of the last hour', () => {
  it('is labelled every 10 min in UTC and named for the hour', () => {
    const svg = providerTimelineSvg('cache', [], 0, now, '1h');
    expect(ticks(svg)).toEqual(['12:20', '12:30', '12:40', '12:50', '13:00', '13:10', '13:20']);
    expect(svg).toContain('aria-label="cache: consumers not served, heals and brakes over the last hour (UTC)"');
    expect(svg).toContain('data-scale="1h"');
  });

  it('spreads the heals of a restart that the 24 h axis puts in one mark', () => {
    const hourly = providerTimelineSvg('cache', restart, 0, now, '1h');
    const daily = providerTimelineSvg('cache', restart, 0, now, '24h');
    expect(counts(hourly, 'healed')).toEqual([1, 1, 1]);
    expect(counts(daily, 'healed')).toEqual([3]);
    // the loss 10 min before now, five sixths of the way along the hour's axis (56 to 708 px)
    expect(hourly).toMatch(new RegExp(`<g data-kind="lost" data-count="3"[^>]*><title>[^<]*</title><circle cx="599"`));
    // the dip: bars of about 22 s at the hour's scale (3 for 20 s, then 2, then 1), one of about 9 min at the day's
    expect([...hourly.matchAll(/<rect data-unserved="(\d)"/g)].map((m) => m[1])).toEqual(['3', '3', '2', '1']);
    expect([...daily.matchAll(/<rect data-unserved="(\d)"/g)].map((m) => m[1])).toEqual(['3']);
  });

  it('draws nothing older than the hour, and counts a loss before it as not served from its start', () => {
    const old = [ev('lost', 'cache/a', now - 2 * hour), ev('healed', 'cache/a', now - 90 * min, 30 * min)];
    expect(providerTimelineSvg('cache', old, 0, now, '1h')).not.toContain('data-kind');
    expect(providerTimelineSvg('cache', old, 0, now, '24h')).toContain('data-kind="healed"');
    const still = [ev('lost', 'cache/a', now - 2 * hour), ...restart];
    expect(unservedSteps(still, 1, now, hour)[0]).toEqual([now - hour, 1]);
    expect(unservedSpans(old, now, hour)).toEqual([]);
    expect(unservedSpans([ev('lost', 'cache/a', now - 2 * hour)], now, hour)).toEqual([[now - hour, now]]);
    const own = consumerTimelineSvg('cache/a', [ev('lost', 'cache/a', now - 2 * hour)], now, '1h');
    expect(own).toMatch(/<rect data-unserved-from="[\d]+" data-unserved-to="\d+" x="56\.0"[^>]*width="652\.0"/);
    expect(own).not.toContain('data-kind');
  });
});

describe('the status page', () => {
  const report = {
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
  const timelines = new Map([['cache', restart]]);

  it('shows the last hour by default after a restart, with a link to the 24 h', () => {
    const html = statusPage(report, {}, [], timelines);
    expect(html).toContain('<h2>Last hour</h2>');
    expect(html).toContain('data-scale="1h"');
    expect(html).toContain('<strong aria-current="true" data-scale="1h">the last hour</strong>');
    expect(html).toContain('<a href="?scale=24h" data-scale="24h">the last 24 h</a>');
    expect(html).toContain('(by default');
  });

  it('shows the scale chosen, keeps it in the filter, and keeps in its links only a filter it knows', () => {
    const html = statusPage(report, { scale: '24h', provider: 'cache', state: 'held' }, [], timelines);
    expect(html).toContain('<h2>Last 24 hours</h2>');
    expect(html).toMatch(/<svg class="timeline"[^>]*data-provider="cache" data-scale="24h"/);
    expect(html).toContain('<a href="?provider=cache&amp;state=held&amp;scale=1h" data-scale="1h">the last hour</a>');
    expect(html).toContain('<input type="hidden" name="scale" value="24h">');
    expect(html).not.toContain('(by default');
    const hostile = statusPage(report, { provider: '"><script>x</script>', state: 'x&y=1' }, [], timelines);
    expect(hostile).toContain('<a href="?scale=24h" data-scale="24h">');
    expect(hostile).not.toMatch(/script>x|x&y|x%26y/);
  });
});
