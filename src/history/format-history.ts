/**
 * A consumer's history as `holdfast history` prints it: a headline, how far back it goes, then
 * one line per transition, oldest first (time, transition, cause, node, reason). The caller
 * prints it inert (`text/terminal-text.ts`): reasons and nodes come from backends and files.
 */
import type { ConsumerHistory, HistoryLine } from './consumer-history.js';

const HEADERS = ['at', 'transition', 'by', 'node', 'reason'] as const;

function cells(l: HistoryLine): string[] {
  return [
    l.at,
    `${l.from} → ${l.to}`,
    l.by ?? '-',
    l.node ?? '-',
    // a node event is no transition written anywhere: its words say what it is
    `${l.reason ?? ''}${l.recorded || l.by === 'node' ? '' : ' (not written to the record: from the timeline)'}`,
  ];
}

export function formatHistory(h: ConsumerHistory): string {
  const rows = h.transitions.map(cells);
  // the node column only where a transition names one
  const columns = HEADERS.map((_, i) => i).filter((i) => HEADERS[i] !== 'node' || rows.some((r) => r[i] !== '-'));
  const widths = columns.map((i) => Math.max(HEADERS[i]!.length, ...rows.map((r) => r[i]!.length)));
  const row = (r: readonly string[]) =>
    columns
      .map((i, c) => (c === columns.length - 1 ? r[i]! : r[i]!.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  const count = h.transitions.length;
  return [
    `${h.consumer}: ${h.state} since ${h.stateSince}`,
    `${count} transition${count === 1 ? '' : 's'}, oldest first; ${h.reach.words}`,
    ...(count > 0 ? ['', row(HEADERS), ...rows.map(row)] : []),
  ].join('\n');
}
