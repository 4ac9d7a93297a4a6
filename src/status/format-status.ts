/** `holdfast status` for a terminal: counts per provider and state, what is wrong, and the consumers listed. */
import { formatDuration } from '../config/duration.js';
import { contestedLine } from './contested-status.js';
import { failedLoginsLines } from './failed-logins-status.js';
import { progressWords } from './first-apply-progress.js';
import { reportLines, type StatusReport } from './status-report.js';
import { inertLines, inertText } from '../text/terminal-text.js';

export function ago(iso: string, now: number): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  const words =
    Math.abs(s) < 90
      ? `${Math.abs(s)}s`
      : Math.abs(s) < 5400
        ? `${Math.round(Math.abs(s) / 60)}m`
        : `${Math.round(Math.abs(s) / 3600)}h`;
  return s >= 0 ? `${words} ago` : `in ${words}`;
}

/** A count as a person reads it: `10,000`. */
const count = (n: number) => n.toLocaleString('en-US');

function table(rows: string[][]): string {
  // not Math.max(...cells): a table of 100,000 consumers (--all) is no argument list
  const widths = rows[0]?.map((_, i) => rows.reduce((widest, r) => Math.max(widest, (r[i] ?? '').length), 0)) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A provider's contested consumers, one line each (the words come from backends: made inert). */
function contestedLines({ contested }: StatusReport['providers'][number]): string[] {
  if (contested.count === 0) return [];
  const more = contested.count - contested.consumers.length;
  const head = `  contested: ${contested.count} consumer${contested.count === 1 ? '' : 's'} changed outside holdfast again and again (someone else manages them too)`;
  return [
    head,
    ...contested.consumers.map((c) => `    ${inertText(contestedLine(c))}`),
    ...(more > 0 ? [`    … and ${more} more`] : []),
  ];
}

/** A provider's consumers with connections from before their rotation, one line each (made inert: addresses come from backends). */
function oldConnectionLines({ oldConnections }: StatusReport['providers'][number]): string[] {
  if (!oldConnections || oldConnections.count === 0) return [];
  const more = oldConnections.count - oldConnections.consumers.length;
  return [
    `  connections from before a rotation (logged in with the old password): ${oldConnections.count} consumer${oldConnections.count === 1 ? '' : 's'}`,
    ...oldConnections.consumers.map((c) => `    ${inertText(c.line)}`),
    ...(more > 0 ? [`    … and ${more} more`] : []),
  ];
}

export function formatStatus(report: StatusReport): string {
  const now = Date.parse(report.at);
  const lines: string[] = [];
  for (const p of report.providers) {
    const counts = Object.entries(p.states)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([state, n]) => `${count(n)} ${state}`)
      .join(', ');
    const deep =
      p.deepCheckEveryMs !== null
        ? `, rules compared every ${formatDuration(Math.max(1000, Math.round(p.deepCheckEveryMs / 1000) * 1000))}`
        : '';
    lines.push(
      `provider ${p.provider}: ${count(p.consumers)} consumer${p.consumers === 1 ? '' : 's'}${counts ? ` (${counts})` : ''}${p.declared !== null ? `, ${count(p.declared)} declared` : ''}${deep}`,
    );
    if (p.firstApplies) lines.push(`  first applies: ${progressWords(p.firstApplies)}`);
    lines.push(...contestedLines(p));
    // the addresses and logins come from the backend's log (a tenant's text): made inert
    lines.push(...failedLoginsLines(p.failedLogins ?? null).map(inertText));
    lines.push(...oldConnectionLines(p));
  }
  if (report.consumers.length > 0) {
    lines.push('');
    const rows = [['CONSUMER', 'STATE', 'SINCE', 'LAST CHECK', 'NEXT', 'BRAKE', 'REASON']];
    for (const c of report.consumers) {
      // each cell on one line, inert: names and reasons come from files and backends
      rows.push([
        `${c.healthy ? ' ' : '!'} ${inertText(c.consumer)}`,
        inertText(c.label),
        ago(c.since, now),
        c.lastCheck ? `${c.lastCheck.outcome} ${ago(c.lastCheck.at, now)}` : '-',
        c.nextAt ? ago(c.nextAt, now) : '-',
        String(c.brakeCount),
        inertText(c.problem ?? c.reason ?? ''),
      ]);
    }
    lines.push(table(rows));
  }
  lines.push('');
  if (report.healthy) {
    lines.push(`all ${count(report.total)} consumers held`);
  } else {
    const unread = report.unreadableShards.length;
    const shards = unread > 0 ? `${unread} queue shard${unread === 1 ? '' : 's'} could not be read` : '';
    const counts = report.total > 0 ? `${count(report.unserved)} of ${count(report.total)} consumers not served` : '';
    const summary = [counts, shards].filter(Boolean).join('; ');
    lines.push(`NOT HEALTHY${summary ? `: ${summary}` : ''}`);
    // the consumers are in the table above; the rest is said here
    for (const line of reportLines(report)) lines.push(`  ${line}`);
  }
  return inertLines(lines.join('\n'));
}
