/**
 * The last hour or the last 24 hours (`timeline-scale.ts`) as a picture, server-rendered SVG (no script, no style sheet of its own:
 * presentation attributes only, so the pages' Content-Security-Policy needs nothing more).
 *
 * - A provider's: how many of its consumers were not served over time (bars, each the most at
 *   once in its few minutes, so that a dip of seconds still shows), each loss as a red mark, each
 *   heal after a loss as a green one, each brake engagement as an orange one.
 * - A consumer's: when it was not served (red bands), its losses, heals and brakes as marks.
 *
 * Both on the same axis: the hour or the 24 h up to now, labelled in UTC (every 10 min, every 3 h); nothing before it
 * is drawn. Marks falling in one pixel column are drawn once, their count and details in the mark's `<title>` (shown on
 * hover).
 */
import { TIMELINE_SPAN_MS } from '../history/timeline-read.js';
import type { TimelineEvent } from '../queue/timeline-event.js';
import { escapeHtml } from './escape-html.js';
import { TIMELINE_SCALES, type TimelineScale } from './timeline-scale.js';

const WIDTH = 720;
const LEFT = 56;
const RIGHT = 12;
const TOP = 8;
const CHART_BOTTOM = 78;
const LANES = { lost: 89, healed: 101, brake: 113, turnedAway: 113 } as const;
const AXIS = 130;
const HEIGHT = 138;
/** The bars' width (px): each shows the most not served at once in its stretch of time (about 22 s, 9 min). */
const BAR = 4;
const COLOURS = { lost: '#b00', healed: '#070', brake: '#d60', turnedAway: '#d60' } as const;
const NAMES = { lost: 'lost', healed: 'healed', brake: 'brake engaged', turnedAway: 'turned away' } as const;

/** Where on the x axis the `spanMs` up to `now` put a moment. */
function axisOf(now: number, spanMs: number): (t: number) => number {
  const start = now - spanMs;
  return (t) => LEFT + ((Math.min(Math.max(t, start), now) - start) / spanMs) * (WIDTH - LEFT - RIGHT);
}

/** The events of the `spanMs` up to `now`: what the picture draws. */
const within = (events: readonly TimelineEvent[], now: number, spanMs: number) =>
  events.filter((e) => e.at >= now - spanMs && e.at <= now);

const fixed = (n: number) => n.toFixed(1);

/** The scale's UTC time lines (every 3 h or every 10 min), labelled `HH:MM`, and the axis' name. */
function hourAxis(now: number, x: (t: number) => number, scale: TimelineScale): string {
  const { spanMs, tickMs } = TIMELINE_SCALES[scale];
  const ticks: string[] = [];
  for (let t = Math.ceil((now - spanMs) / tickMs) * tickMs; t <= now; t += tickMs) {
    const label = new Date(t).toISOString().slice(11, 16);
    ticks.push(
      `<line x1="${fixed(x(t))}" y1="${TOP}" x2="${fixed(x(t))}" y2="${LANES.brake + 6}" stroke="#ddd"/><text x="${fixed(x(t))}" y="${AXIS}" font-size="10" text-anchor="middle" fill="#555" data-tick>${label}</text>`,
    );
  }
  const base = `<line x1="${LEFT}" y1="${CHART_BOTTOM}" x2="${WIDTH - RIGHT}" y2="${CHART_BOTTOM}" stroke="#999"/>`;
  return `${base}${ticks.join('')}<text x="${WIDTH - RIGHT}" y="${HEIGHT - 1}" font-size="9" text-anchor="end" fill="#777">UTC</text>`;
}

const when = (at: number) => new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
const seconds = (ms: number) => (ms < 90_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);

/** One line of a mark's title: what, when, who, why. */
function describe(e: TimelineEvent): string {
  const took = e.kind === 'healed' && e.tookMs !== undefined ? ` after ${seconds(e.tookMs)}` : '';
  const what = e.kind === 'lost' ? `not served (${e.state})` : `${NAMES[e.kind]}${took}`;
  return `${when(e.at)} ${e.key} ${what}${e.reason ? `: ${e.reason}` : ''}`;
}

/** The marks of `kind`, one per pixel column, each titled with its events (the first few). */
function marks(kind: TimelineEvent['kind'], events: readonly TimelineEvent[], x: (t: number) => number): string {
  const columns = new Map<number, TimelineEvent[]>();
  for (const e of events)
    if (e.kind === kind) columns.set(Math.round(x(e.at)), [...(columns.get(Math.round(x(e.at))) ?? []), e]);
  return [...columns]
    .map(([column, list]) => {
      const shown = list.slice(0, 5).map(describe);
      const more = list.length > shown.length ? [`… and ${list.length - shown.length} more`] : [];
      const title = `${list.length} ${NAMES[kind]}\n${[...shown, ...more].join('\n')}`;
      const y = LANES[kind];
      const shape =
        kind === 'brake'
          ? `<path d="M${column} ${y - 5}L${column + 5} ${y}L${column} ${y + 5}L${column - 5} ${y}Z" fill="${COLOURS[kind]}"/>`
          : `<circle cx="${column}" cy="${y}" r="4" fill="${COLOURS[kind]}"/>`;
      return `<g data-kind="${kind}" data-count="${list.length}" data-at="${list[0]!.at}"><title>${escapeHtml(title)}</title>${shape}</g>`;
    })
    .join('');
}

/**
 * How many were not served over the `spanMs` up to `now`, as steps `[from, count]` oldest first: counted back from
 * `unservedNow` over the events in it (a loss adds one from its moment on, a heal takes one away), never below 0.
 */
export function unservedSteps(
  events: readonly TimelineEvent[],
  unservedNow: number,
  now: number,
  spanMs = TIMELINE_SPAN_MS,
): Array<[at: number, count: number]> {
  const steps: Array<[number, number]> = [];
  const shown = within(events, now, spanMs);
  let count = unservedNow;
  for (let i = shown.length - 1; i >= 0; i--) {
    const e = shown[i]!;
    if (e.kind === 'brake' || e.kind === 'turnedAway') continue;
    steps.push([e.at, Math.max(0, count)]);
    count += e.kind === 'lost' ? -1 : 1;
  }
  steps.push([now - spanMs, Math.max(0, count)]);
  return steps.reverse();
}

/** The most not served at once in each bar's stretch of time, by bar (left to right); bars of 0 left out. */
export function unservedBars(steps: ReadonlyArray<[number, number]>, x: (t: number) => number): Map<number, number> {
  const bars = new Map<number, number>();
  steps.forEach(([t, count], i) => {
    const until = steps[i + 1]?.[0];
    const first = Math.floor((x(t) - LEFT) / BAR);
    const last =
      until === undefined ? Math.floor((WIDTH - RIGHT - LEFT - 0.001) / BAR) : Math.floor((x(until) - LEFT) / BAR);
    for (let bar = first; bar <= last && count > 0; bar++) bars.set(bar, Math.max(bars.get(bar) ?? 0, count));
  });
  return bars;
}

/** The bars of `steps`, with their scale on the left. */
function barChart(steps: ReadonlyArray<[number, number]>, x: (t: number) => number): string {
  const bars = unservedBars(steps, x);
  const top = Math.max(1, ...bars.values());
  const rects = [...bars]
    .map(([bar, count]) => {
      const h = Math.max(1, (count / top) * (CHART_BOTTOM - TOP));
      return `<rect data-unserved="${count}" x="${LEFT + bar * BAR}" y="${fixed(CHART_BOTTOM - h)}" width="${BAR}" height="${fixed(h)}" fill="#d33"/>`;
    })
    .join('');
  const scale = `<text x="${LEFT - 4}" y="${TOP + 8}" font-size="10" text-anchor="end" fill="#555">${top}</text><text x="${LEFT - 4}" y="${CHART_BOTTOM}" font-size="10" text-anchor="end" fill="#555">0</text>`;
  return `${rects}${scale}<text x="${LEFT + 2}" y="${TOP + 8}" font-size="10" fill="#555">not served</text>`;
}

function laneLabels(): string {
  const label = (y: number, text: string) =>
    `<text x="${LEFT - 4}" y="${y + 3}" font-size="10" text-anchor="end" fill="#555">${text}</text>`;
  return `${label(LANES.lost, 'lost')}${label(LANES.healed, 'healed')}${label(LANES.brake, 'brakes')}`;
}

function svg(label: string, data: string, body: string): string {
  return `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(label)}" ${data}><title>${escapeHtml(label)}</title>${body}</svg>`;
}

/** The marks of every kind, of the events in the scale's span. */
function allMarks(events: readonly TimelineEvent[], x: (t: number) => number): string {
  return `${laneLabels()}${marks('lost', events, x)}${marks('healed', events, x)}${marks('brake', events, x)}`;
}

/** A node event drawn across a provider's timeline (a node restarted, …): when, and its words. */
export interface NodeMark {
  at: number;
  /** `cache 127.0.0.1:6379 restarted at 06:05:10 (new run id): 10,000 consumers made suspect`. */
  words: string;
}

/**
 * Each node event within the span as a dashed blue line across the chart and the lanes, titled with its words. One
 * seen after `now` (read a moment after the report the page is drawn at) is drawn at the right edge, not left out.
 */
function nodeMarks(marks: readonly NodeMark[], now: number, spanMs: number, x: (t: number) => number): string {
  return marks
    .filter((m) => m.at >= now - spanMs)
    .map((m) => {
      const at = fixed(x(Math.min(m.at, now)));
      return `<g data-kind="node-event" data-at="${m.at}"><title>${escapeHtml(m.words)}</title><line x1="${at}" y1="${TOP}" x2="${at}" y2="${LANES.brake + 6}" stroke="#15c" stroke-width="2" stroke-dasharray="4 2"/><text x="${at}" y="${TOP + 8}" dx="-3" font-size="10" text-anchor="end" fill="#15c">node event</text></g>`;
    })
    .join('');
}

/**
 * A provider's last hour or 24 h (`scale`): its consumers not served over time, heals and brakes, and its node events
 * (`nodeEvents`); `unservedNow`: how many are not served now.
 */
export function providerTimelineSvg(
  provider: string,
  events: readonly TimelineEvent[],
  unservedNow: number,
  now: number,
  scale: TimelineScale = '24h',
  nodeEvents: readonly NodeMark[] = [],
): string {
  const { spanMs, words } = TIMELINE_SCALES[scale];
  const x = axisOf(now, spanMs);
  const body = `${hourAxis(now, x, scale)}${barChart(unservedSteps(events, unservedNow, now, spanMs), x)}${allMarks(within(events, now, spanMs), x)}${nodeMarks(nodeEvents, now, spanMs, x)}`;
  return svg(
    `${provider}: consumers not served, heals and brakes over ${words} (UTC)`,
    `data-provider="${escapeHtml(provider)}" data-scale="${scale}"`,
    body,
  );
}

/**
 * Its spans not served within the `spanMs` up to `now`, `[from, to]`: from a loss (or the window's start, for a loss
 * before it or a heal that began before) to its heal or now.
 */
export function unservedSpans(
  events: readonly TimelineEvent[],
  now: number,
  spanMs = TIMELINE_SPAN_MS,
): Array<[from: number, to: number]> {
  const start = now - spanMs;
  const spans: Array<[number, number]> = [];
  let from: number | null = null;
  for (const e of events) {
    if (e.kind === 'lost' && from === null) from = e.at;
    if (e.kind === 'healed') {
      spans.push([from ?? e.at - (e.tookMs ?? 0), e.at]);
      from = null;
    }
  }
  if (from !== null) spans.push([from, now]);
  return spans.filter(([, to]) => to >= start).map(([from, to]) => [Math.max(start, from), to]);
}

/** One consumer's last hour or 24 h (`scale`; its own events): when it was not served, and its marks. */
export function consumerTimelineSvg(
  key: string,
  events: readonly TimelineEvent[],
  now: number,
  scale: TimelineScale = '24h',
): string {
  const { spanMs, words } = TIMELINE_SCALES[scale];
  const x = axisOf(now, spanMs);
  const bands = unservedSpans(events, now, spanMs)
    .map(
      ([from, to]) =>
        `<rect data-unserved-from="${from}" data-unserved-to="${to}" x="${fixed(x(from))}" y="${TOP}" width="${fixed(Math.max(BAR, x(to) - x(from)))}" height="${CHART_BOTTOM - TOP}" fill="#d33"/>`,
    )
    .join('');
  const body = `${hourAxis(now, x, scale)}${bands}<text x="${LEFT + 2}" y="${TOP + 8}" font-size="10" fill="#555">not served</text>${allMarks(within(events, now, spanMs), x)}`;
  return svg(
    `${key}: when it was not served, its heals and brakes over ${words} (UTC)`,
    `data-consumer="${escapeHtml(key)}" data-scale="${scale}"`,
    body,
  );
}
