/**
 * The dashboard's consumer's-side section: per provider, the consumers turned away (held, their
 * app failing to log in: how many failed logins, from where) and the failed logins of logins no
 * consumer claims. Absent when there are none. The addresses come from the backend's log (a
 * tenant's text): escaped.
 */
import { turnedAwayWords } from '../status/failed-logins-status.js';
import type { StatusReport } from '../status/status-report.js';
import { formatDuration } from '../config/duration.js';
import { escapeHtml } from './escape-html.js';

/** One provider's rows: each consumer turned away, then the unattributed count and lost entries. */
function rows(p: StatusReport['providers'][number]): string[] {
  const f = p.failedLogins;
  if (!f) return [];
  const window = formatDuration(f.windowMs);
  const consumers = f.consumers.map(
    (c) =>
      `<li class="bad"><a href="/consumer?key=${encodeURIComponent(c.consumer)}">${escapeHtml(c.consumer)}</a>: ${escapeHtml(turnedAwayWords(c, f.windowMs).slice(c.consumer.length + 2))}</li>`,
  );
  const more = f.count > f.consumers.length ? [`<li>… and ${f.count - f.consumers.length} more</li>`] : [];
  const others =
    f.unattributed > 0
      ? [
          `<li>${escapeHtml(p.provider)}: ${f.unattributed} failed logins of logins no consumer claims in the last ${window}</li>`,
        ]
      : [];
  const lost =
    f.lost.length > 0
      ? [`<li>${escapeHtml(p.provider)}: failed logins may have been missed on ${escapeHtml(f.lost.join(', '))}</li>`]
      : [];
  return [...consumers, ...more, ...others, ...lost];
}

export function turnedAwaySection(report: StatusReport): string {
  const items = report.providers.flatMap(rows);
  if (items.length === 0) return '';
  return `<h2>Turned away</h2><p>Held, but their app fails to log in (the backend's log of failed logins).</p><ul id="turned-away">${items.join('')}</ul>`;
}
