/** `holdfast status` as a table for a terminal. */
import type { StatusReport } from './status-report.js';

function ago(iso: string, now: number): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  const words = Math.abs(s) < 90 ? `${Math.abs(s)}s` : Math.abs(s) < 5400 ? `${Math.round(Math.abs(s) / 60)}m` : `${Math.round(Math.abs(s) / 3600)}h`;
  return s >= 0 ? `${words} ago` : `in ${words}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd()).join('\n');
}

export function formatStatus(report: StatusReport): string {
  const now = Date.parse(report.at);
  const lines: string[] = [];
  for (const p of report.providers) {
    const problems = [
      p.contributionsError ? `contributions refused (last good state in force):\n    ${p.contributionsError.replace(/\n/g, '\n    ')}` : '',
      p.paused ? `checks paused since ${ago(p.paused.since, now)}: ${p.paused.reason}` : '',
      ...p.problems,
    ].filter(Boolean);
    lines.push(`provider ${p.provider}: ${p.consumers} consumer${p.consumers === 1 ? '' : 's'}${problems.length ? ` — ${problems.join('; ')}` : ''}`);
  }
  lines.push('');
  const rows = [['CONSUMER', 'STATE', 'SINCE', 'LAST CHECK', 'NEXT', 'BRAKE', 'REASON']];
  for (const c of report.consumers) {
    rows.push([
      `${c.healthy ? ' ' : '!'} ${c.consumer}`,
      c.label,
      ago(c.since, now),
      c.lastCheck ? `${c.lastCheck.outcome} ${ago(c.lastCheck.at, now)}` : '-',
      c.nextAt ? ago(c.nextAt, now) : '-',
      String(c.brakeCount),
      c.reason ?? '',
    ]);
  }
  lines.push(table(rows));
  const unhealthy = report.consumers.filter((c) => !c.healthy).length;
  lines.push('', report.healthy ? `all ${report.consumers.length} consumers held` : `NOT HEALTHY: ${unhealthy} of ${report.consumers.length} consumers not held${report.providers.some((p) => !p.healthy) ? '; provider problems above' : ''}`);
  return lines.join('\n');
}
