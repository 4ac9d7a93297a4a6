/**
 * The status page (`/`) and a consumer's page: plain server-rendered HTML that refreshes itself,
 * each with a picture of the last hour or 24 h (inline SVG, `timeline-svg.ts`: no script, no style of its own; links
 * choose the scale, `timeline-scale.ts`).
 * Its one style sheet and one script are inline and fixed, allowed by their hashes
 * ({@link PAGE_CSP}); nothing else runs (no inline handlers).
 */
import { createHash } from 'node:crypto';
import { contestedLine, type ContestedStatus } from '../status/contested-status.js';
import { turnedAwaySection } from './turned-away-section.js';
import { ago } from '../status/format-status.js';
import { progressWords } from '../status/first-apply-progress.js';
import { escapeHtml } from './escape-html.js';
import type { ConsumerStatus, StatusReport } from '../status/status-report.js';
import { isUnreadable, type StoredConsumer } from '../store/consumer-record.js';
import { STATE_MEANINGS } from '../../machines/consumer-health.js';
import type { TimelineEvent } from '../queue/timeline-event.js';
import { consumerTimelineSvg, providerTimelineSvg, type NodeMark } from './timeline-svg.js';
import { consumerLink, incidentSection, nodeEventCell, nodeEventTitle } from './incident-view.js';
import type { NodeEvents } from './node-event-read.js';
import { defaultScale, SCALE_PARAMETER, TIMELINE_SCALES, type TimelineScale } from './timeline-scale.js';
import { recentTransitions } from '../history/recent-transitions.js';

const REFRESH_SECONDS = 5;

/** A count as a person reads it: `10,000`. */
const count = (n: number) => n.toLocaleString('en-US');

export { escapeHtml };

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .3em; } h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
table { border-collapse: collapse; } th, td { text-align: left; padding: .25em .7em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f4; } .bad { background: #fde8e8; } .mark { color: #b00; font-weight: bold; }
.ok { color: #070; font-weight: bold; } .verdict { font-size: 1.2em; margin: .5em 0; } ul.reasons { color: #b00; margin: .3em 0; }
form { margin: .5em 0; } nav a { margin-right: 1em; } code { background: #f4f4f4; padding: 0 .2em; }
progress { width: 6em; vertical-align: middle; } .incident p { margin: .2em 0 .2em 1em; } .more { color: #555; }
svg.timeline { display: block; margin: .2em 0 .8em; border: 1px solid #ddd; background: #fff; } h3 { font-size: 1em; margin: .6em 0 .1em; }`;

/** Submits the filter form when a choice changes (without a script, the filter button shows). */
const SCRIPT = `
for (const select of document.querySelectorAll('select[data-submit]')) select.addEventListener('change', () => select.form.submit());`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The Content-Security-Policy of these pages: their own style and script (by hash), forms and links to this server,
 * nothing else.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hash(STYLE)}`,
  `script-src ${hash(SCRIPT)}`,
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><nav><a href="/">status</a><a href="/queues">queue (Bull Board)</a><a href="/status">/status</a><a href="/healthz">/healthz</a><a href="/metrics">/metrics</a></nav>
${body}
<p><small>refreshes every ${REFRESH_SECONDS} s</small></p><script>${SCRIPT}</script></body></html>
`;
}

function consumerRow(c: ConsumerStatus, now: number): string {
  const cells = [
    `${c.healthy ? '' : '<span class="mark" title="not served">✗ </span>'}${consumerLink(c.consumer)}`,
    escapeHtml(c.label),
    escapeHtml(ago(c.since, now)),
    c.lastCheck ? escapeHtml(`${c.lastCheck.outcome} ${ago(c.lastCheck.at, now)}`) : '-',
    c.nextAt ? escapeHtml(ago(c.nextAt, now)) : '-',
    String(c.brakeCount),
    escapeHtml(c.problem ?? c.reason ?? ''),
  ];
  return `<tr class="${c.healthy ? 'served' : 'bad'}" data-consumer="${escapeHtml(c.consumer)}" data-state="${escapeHtml(c.state)}">${cells.map((x) => `<td>${x}</td>`).join('')}</tr>`;
}

function select(name: string, label: string, values: string[], chosen: string | undefined): string {
  const options = ['', ...values].map(
    (v) =>
      `<option value="${escapeHtml(v)}"${v === (chosen ?? '') ? ' selected' : ''}>${v === '' ? `every ${label}` : escapeHtml(v)}</option>`,
  );
  return `<label>${label} <select name="${name}" data-submit>${options.join('')}</select></label>`;
}

/** Each provider's timeline events of the last 24 h (see `timeline-svg.ts`); null: they could not be read. */
export type Timelines = ReadonlyMap<string, readonly TimelineEvent[]> | null;

/**
 * How many of a provider's consumers are not served now, as its timeline counts them (a check under way is not a loss).
 */
function unservedNow(states: Record<string, number>): number {
  return Object.entries(states).reduce((n, [state, count]) => {
    const meaning = STATE_MEANINGS[state as keyof typeof STATE_MEANINGS];
    return state === 'checking' || meaning?.healthy ? n : n + count;
  }, 0);
}

/**
 * The links to each scale of the timelines (`query`: the page's other parameters, kept), the one shown not a link; with
 * whether it was chosen or the default.
 */
function scaleChoice(shown: TimelineScale, chosen: boolean, query: Record<string, string | undefined>): string {
  const links = (Object.keys(TIMELINE_SCALES) as TimelineScale[]).map((scale) => {
    const { words } = TIMELINE_SCALES[scale];
    if (scale === shown) return `<strong aria-current="true" data-scale="${scale}">${words}</strong>`;
    const all: Record<string, string | undefined> = { ...query, [SCALE_PARAMETER]: scale };
    const params = Object.entries(all)
      .filter((pair): pair is [string, string] => pair[1] !== undefined && pair[1] !== '')
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    return `<a href="${escapeHtml(`?${params.join('&')}`)}" data-scale="${scale}">${words}</a>`;
  });
  return `<nav id="timeline-scale">scale: ${links.join(' ')}${chosen ? '' : ' <small>(by default: the last hour while something happened in it or the run is young)</small>'}</nav>`;
}

/** The scale shown: the one chosen, else the default for these events. */
function shownScale(
  chosen: TimelineScale | undefined,
  events: Iterable<Pick<TimelineEvent, 'at'>>,
  now: number,
  startedAt?: number,
) {
  return chosen ?? defaultScale(events, now, startedAt);
}

/** The provider's last node event as its timeline marks it (none when it is not known). */
function nodeMarksOf(provider: string, nodeEvents: NodeEvents): NodeMark[] {
  const event = nodeEvents?.get(provider)?.event;
  const at = event ? Date.parse(event.at) : NaN;
  if (!event || !Number.isFinite(at)) return [];
  const made = `${event.of.toLocaleString('en-US')} consumer${event.of === 1 ? '' : 's'} made suspect`;
  return [{ at, words: `${provider}: ${nodeEventTitle(event)}: ${made}` }];
}

/** The providers' pictures of the last hour or 24 h, each with its last node event. */
function timelineSection(
  report: StatusReport,
  timelines: Timelines,
  now: number,
  filter: PageFilter,
  nodeEvents: NodeEvents,
): string {
  const marks = new Map(report.providers.map((p) => [p.provider, nodeMarksOf(p.provider, nodeEvents)]));
  const moments = [...(timelines ? [...timelines.values()].flat() : []), ...[...marks.values()].flat()];
  const scale = shownScale(filter.scale, moments, now, filter.startedAt);
  const heading = `<h2>${TIMELINE_SCALES[scale].heading}</h2>`;
  // the filter kept in the links only as the page knows it: a provider it shows, a state it has a meaning for
  const kept = {
    provider: report.providers.some((p) => p.provider === filter.provider) ? filter.provider : undefined,
    state: filter.state !== undefined && Object.hasOwn(STATE_MEANINGS, filter.state) ? filter.state : undefined,
  };
  const choice = scaleChoice(scale, filter.scale !== undefined, kept);
  if (timelines === null)
    return `${heading}${choice}<p class="mark" id="timelines">The timelines could not be read from the queue's Redis.</p>`;
  const pictures = report.providers.map(
    (p) =>
      `<h3>${escapeHtml(p.provider)}</h3>${providerTimelineSvg(p.provider, timelines.get(p.provider) ?? [], unservedNow(p.states), now, scale, marks.get(p.provider))}`,
  );
  return `${heading}${choice}<div id="timelines">${pictures.join('') || '<p>no providers</p>'}</div>`;
}

/** A provider's contested consumers: how many, each linked with its line as a tooltip. */
function contestedCell({ contested }: StatusReport['providers'][number]): string {
  if (contested.count === 0) return '0';
  const named = contested.consumers.map(
    (c) => `<span title="${escapeHtml(contestedLine(c))}">${consumerLink(c.consumer)}</span>`,
  );
  const more = contested.count - contested.consumers.length;
  return `<span class="mark">${contested.count}</span>: ${named.join(', ')}${more > 0 ? `, … ${more} more` : ''}`;
}

export interface PageFilter {
  provider?: string | undefined;
  state?: string | undefined;
  /** The timelines' scale chosen (validated: `timeline-scale.ts`); none: the default. */
  scale?: TimelineScale | undefined;
  /** When the dashboard started (ms): a young run's timelines default to the last hour. */
  startedAt?: number | undefined;
}

/** The providers' first applies still outstanding, each with its pace: a line and a bar each; empty when none is. */
function firstAppliesSection(report: StatusReport): string {
  const lines = report.providers.flatMap((p) =>
    !p.firstApplies
      ? []
      : [
          `<li><progress value="${p.firstApplies.applied}" max="${p.firstApplies.declared}"></progress> ${escapeHtml(p.provider)}: ${escapeHtml(progressWords(p.firstApplies))}</li>`,
        ],
  );
  return lines.length === 0 ? '' : `<h2>First applies</h2><ul id="first-applies">${lines.join('')}</ul>`;
}

/**
 * The status page: verdict and reasons, the consumers to look at now (unserved, suspect), providers (each with its last
 * node event), timelines, then the consumers (unserved first, marked), filtered. `nodeEvents`: each provider's last
 * node event and a few of its suspects (null: unreadable).
 */
export function statusPage(
  report: StatusReport,
  filter: PageFilter,
  reasons: string[],
  timelines: Timelines = new Map(),
  nodeEvents: NodeEvents = new Map(),
): string {
  const now = Date.parse(report.at);
  const verdict = report.healthy
    ? `<p class="verdict ok" id="verdict">Every consumer served: ${count(report.total)} held</p>`
    : `<p class="verdict mark" id="verdict">NOT SERVED: ${count(report.unserved)} of ${count(report.total)} consumers</p>` +
      `<ul class="reasons">${reasons.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>`;
  const providers = report.providers
    .map((p) => {
      const counts = Object.entries(p.states)
        .map(([s, n]) => `${count(n)} ${escapeHtml(s)}`)
        .join(', ');
      const cells = [
        `${p.healthy ? '' : '<span class="mark">✗ </span>'}${escapeHtml(p.provider)}`,
        count(p.consumers),
        p.declared === null ? '-' : count(p.declared),
        counts || '-',
        p.lastCheckAt ? escapeHtml(ago(p.lastCheckAt, now)) : '-',
        nodeEventCell(p, nodeEvents, now),
        contestedCell(p),
        p.problems.map(escapeHtml).join('<br>'),
      ];
      return `<tr class="${p.healthy ? '' : 'bad'}">${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
    })
    .join('');
  const states = [...new Set(report.providers.flatMap((p) => Object.keys(p.states)))].sort();
  const shown = report.consumers
    .filter((c) => (!filter.provider || c.provider === filter.provider) && (!filter.state || c.state === filter.state))
    .sort((a, b) => Number(a.healthy) - Number(b.healthy) || (a.consumer < b.consumer ? -1 : 1));
  const listing =
    report.listing === 'all'
      ? ''
      : `<p>Only the consumers not served are listed (${count(report.total)} in all); <code>holdfast status --all</code> lists every one.</p>`;
  return page(
    `holdfast: ${report.healthy ? 'served' : 'NOT SERVED'}`,
    `<h1>holdfast</h1>${verdict}
${incidentSection(report, nodeEvents)}
${firstAppliesSection(report)}
<h2>Providers</h2>
<table id="providers"><tr><th>provider</th><th>consumers</th><th>declared</th><th>by state</th><th>last check</th><th>node event</th><th>contested</th><th>problems</th></tr>${providers}</table>
${turnedAwaySection(report)}
${timelineSection(report, timelines, now, filter, nodeEvents)}
<h2>Consumers</h2>${listing}
<form method="get" action="/">${select(
      'provider',
      'provider',
      report.providers.map((p) => p.provider),
      filter.provider,
    )} ${select('state', 'state', states, filter.state)}${filter.scale ? `<input type="hidden" name="${SCALE_PARAMETER}" value="${filter.scale}">` : ''} <noscript><button>filter</button></noscript></form>
<table id="consumers"><tr><th>consumer</th><th>state</th><th>since</th><th>last check</th><th>next check</th><th>brake</th><th>reason</th></tr>${shown.map((c) => consumerRow(c, now)).join('')}</table>`,
  );
}

/** Whether the consumer is contested, in words (`src/queue/contest.ts`). */
function contestFact(contest: ContestedStatus | null | 'unknown'): string {
  if (contest === 'unknown') return "unknown: the queue's Redis did not answer in time";
  return contest ? contestedLine(contest) : 'no';
}

/** A consumer's picture of the last hour or 24 h (`scale`: as chosen, else its default), with the links to each. */
function consumerTimeline(key: string, events: readonly TimelineEvent[] | null, now: number, filter: PageFilter) {
  const scale = shownScale(filter.scale, events ?? [], now, filter.startedAt);
  const picture =
    events === null
      ? `<p class="mark" id="timeline">Its timeline could not be read from the queue's Redis.</p>`
      : consumerTimelineSvg(key, events, now, scale);
  return `<h2>${TIMELINE_SCALES[scale].heading}</h2>${scaleChoice(scale, filter.scale !== undefined, { key })}${picture}`;
}

/**
 * One consumer: what the status says, whether it is contested, its last hour or 24 h (`events`: its own
 * timeline events; null: unreadable; `timeline`: the scale chosen) and its recent transitions (its record's, and the
 * heals only its timeline holds).
 */
export function consumerPage(
  key: string,
  status: ConsumerStatus | undefined,
  record: StoredConsumer | null,
  at: Date,
  events: readonly TimelineEvent[] | null = [],
  contest: ContestedStatus | null | 'unknown' = null,
  timeline: PageFilter = {},
  oldConnections: string | null = null,
): string {
  const now = at.getTime();
  if (!record)
    return page(
      `holdfast: ${key}`,
      `<h1>${escapeHtml(key)}</h1><p class="mark">No record: not declared, or its first apply has not been written yet.</p>`,
    );
  if (isUnreadable(record)) {
    return page(
      `holdfast: ${key}`,
      `<h1>${escapeHtml(key)}</h1><p class="mark">✗ Its record cannot be read: ${escapeHtml(record.unreadable)}. It is left as it is and not acted on.</p>`,
    );
  }
  const facts: Array<[string, string]> = [
    ['state', status ? `${status.healthy ? '' : '✗ '}${status.label}` : record.machine.state],
    ['since', `${record.stateSince.toISOString()} (${ago(record.stateSince.toISOString(), now)})`],
    ['login', record.desired.login],
    ['declared at', record.desired.source],
    [
      'last check',
      status?.lastCheck
        ? `${status.lastCheck.outcome} ${ago(status.lastCheck.at, now)}${status.lastCheck.detail ? `: ${status.lastCheck.detail}` : ''}`
        : '-',
    ],
    ['next check', status?.nextAt ? ago(status.nextAt, now) : '-'],
    ['brake count', String(status?.brakeCount ?? 0)],
    ['reason', status?.problem ?? status?.reason ?? '-'],
    ['last applied', record.appliedAt ? record.appliedAt.toISOString() : 'never'],
    ['contested', contestFact(contest)],
    // the clients that logged in with the old password, after a rotation (`src/old-connections/`): shown when listed
    ...(oldConnections !== null ? [['from before its rotation', oldConnections] as [string, string]] : []),
  ];
  const history = recentTransitions(record, events)
    .map(
      (h) =>
        `<tr><td>${escapeHtml(h.at.toISOString())}</td><td>${escapeHtml(ago(h.at.toISOString(), now))}</td><td>${escapeHtml(h.from)} → ${escapeHtml(h.to)}</td><td>${escapeHtml(h.reason ?? '')}</td></tr>`,
    )
    .join('');
  return page(
    `holdfast: ${key}`,
    `<h1>${escapeHtml(key)}</h1>
<table id="facts">${facts.map(([k, v]) => `<tr${k === 'contested' && contest !== null ? ' class="bad" id="contested"' : ''}><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>
${consumerTimeline(key, events, now, timeline)}
<h2>Recent transitions</h2>
<table id="history"><tr><th>at</th><th></th><th>transition</th><th>reason</th></tr>${history || '<tr><td colspan="4">none yet</td></tr>'}</table>`,
  );
}
