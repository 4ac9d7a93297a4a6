/**
 * What the status page shows a person in the middle of an incident: on each provider's row its last node event and
 * how many of its consumers are still suspect (draining as they are asked), and for each provider the consumers not
 * served and the suspect ones, each a link to its page, bounded (the first {@link LISTED}, then "and N more").
 * Consumer keys are written by tenants: every one is escaped.
 */
import { nodeEventWords } from '../adapters/incarnation-words.js';
import type { SuspectEvent } from '../queue/coordination.js';
import { ago } from '../status/format-status.js';
import {
  redReasons,
  reportLines,
  type ConsumerStatus,
  type ProviderHealth,
  type StatusReport,
} from '../status/status-report.js';
import { escapeHtml } from './escape-html.js';
import type { NodeEvents } from './node-event-read.js';

/** Consumers named per list; the others are counted. */
export const LISTED = 50;
/** Consumers' own lines among the reasons under the verdict; the others are listed below it. */
export const REASONS_LISTED = 10;

const count = (n: number) => n.toLocaleString('en-US');

/** A consumer's link to its page, `title`: what is wrong with it, when known. */
export function consumerLink(key: string, title?: string): string {
  const hint = title ? ` title="${escapeHtml(title)}"` : '';
  return `<a href="/consumer?key=${encodeURIComponent(key)}"${hint}>${escapeHtml(key)}</a>`;
}

/**
 * The provider's node event and its suspects now: the report's (what made it red or green); the page's own read only
 * names the last event when the report has no suspects, its count not taken: read a moment apart, it could show
 * suspects beside a green verdict.
 */
function eventOf(p: ProviderHealth, events: NodeEvents): { count: number; event: SuspectEvent | null } {
  if (p.suspects) return p.suspects;
  return { count: 0, event: events?.get(p.provider)?.event ?? null };
}

/** `node 127.0.0.1:6379 restarted at 06:05:10 (new run id)`, as the status says it after `provider cache:`. */
export function nodeEventTitle(event: SuspectEvent): string {
  return `node ${event.node} ${nodeEventWords(event.why, event.at)}`;
}

/**
 * The provider's row's node-event cell: while suspects remain, the event (marked) and `6,120 of 10,000 not asked
 * since` with a bar of those asked; after, the event, when, and that all were asked; `-` when none is known.
 */
export function nodeEventCell(p: ProviderHealth, events: NodeEvents, now: number): string {
  const { count: left, event } = eventOf(p, events);
  if (!event) {
    if (left > 0) return `<span class="mark">${count(left)} suspect</span> (the event is not known)`;
    return events === null ? '<small>could not be read</small>' : '-';
  }
  const title = escapeHtml(nodeEventTitle(event));
  const of = Math.max(event.of, left);
  const when = escapeHtml(ago(event.at, now));
  if (left === 0 && event.of === 0)
    return `<span data-node-event="asked">${title}, ${when}: none of its consumers had been asked about before it</span>`;
  if (left === 0) return `<span data-node-event="asked">${title}, ${when}: all ${count(event.of)} asked since</span>`;
  return (
    `<span data-node-event="suspect" data-suspects="${left}"><span class="mark">${title}</span>: ` +
    `<progress value="${of - left}" max="${of}"></progress> ${count(left)} of ${count(of)} not asked since</span>`
  );
}

/** `a, b, c, and 12 more` of `total`, links each. */
function bounded(links: string[], total: number): string {
  const more = total - links.length;
  return `${links.join(', ')}${more > 0 ? `, <span class="more">and ${count(more)} more</span>` : ''}`;
}

/** The provider's unserved consumers as the report lists them (sorted), each titled with what is wrong. */
function unservedList(p: ProviderHealth, consumers: readonly ConsumerStatus[]): string {
  const unserved = consumers.filter((c) => !c.healthy && c.provider === p.provider);
  if (unserved.length === 0) return '';
  const links = unserved.slice(0, LISTED).map((c) => consumerLink(c.consumer, c.problem ?? c.reason ?? c.label));
  return `<p data-list="unserved"><span class="mark">${count(unserved.length)} not served</span>: ${bounded(links, unserved.length)}</p>`;
}

/** The provider's suspect consumers: counted, a sample linked (those the page read). */
function suspectList(p: ProviderHealth, events: NodeEvents): string {
  const { count: left, event } = eventOf(p, events);
  if (left === 0) return '';
  const sample = events?.get(p.provider)?.sample ?? [];
  const since = event ? ` since ${escapeHtml(nodeEventTitle(event))}` : '';
  const links = sample.slice(0, LISTED).map((key) => consumerLink(key));
  const named =
    events === null
      ? "<small>their names could not be read from the queue's Redis in time</small>"
      : bounded(links, Math.max(left, links.length));
  return `<p data-list="suspect"><span class="mark">${count(left)} suspect</span>, not asked${since}${named ? `: ${named}` : ''}</p>`;
}

/** For each provider with consumers not served or suspect, both lists; empty when none has. */
export function incidentSection(report: StatusReport, events: NodeEvents): string {
  const parts = report.providers.flatMap((p) => {
    const lists = `${unservedList(p, report.consumers)}${suspectList(p, events)}`;
    return lists
      ? [
          `<div class="incident" data-provider="${escapeHtml(p.provider)}"><h3>${escapeHtml(p.provider)}</h3>${lists}</div>`,
        ]
      : [];
  });
  return parts.length === 0 ? '' : `<h2>To look at now</h2><div id="incident">${parts.join('')}</div>`;
}

/**
 * The reasons under the verdict: every line of the report and its providers, then the first {@link REASONS_LISTED}
 * consumers' own lines and how many more (a restart's hundreds of losses are listed below, not in the verdict).
 */
export function pageReasons(report: StatusReport): string[] {
  const all = redReasons(report);
  const head = reportLines(report).length + REASONS_LISTED;
  const more = all.length - head;
  return more > 0 ? [...all.slice(0, head), `… and ${count(more)} more consumers not served: listed below`] : all;
}
