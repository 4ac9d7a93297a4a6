/**
 * Contested consumers on the dashboard: counted and linked on the status page, said on the consumer's page, escaped
 * (the words come from backends).
 */
import { describe, expect, it } from 'vitest';
import { consumerPage, statusPage } from '../../../src/http/status-page.js';
import type { ContestedStatus } from '../../../src/status/contested-status.js';
import type { StatusReport } from '../../../src/status/status-report.js';
import type { StoredConsumer } from '../../../src/store/consumer-record.js';

const contest: ContestedStatus = {
  consumer: 'cache/photos',
  findings: 3,
  since: '2026-12-03T05:00:00.000Z',
  until: '2026-12-03T06:00:00.000Z',
  last: 'rules-differ (keys: the backend has "~<script>alert(1)</script>")',
  windowMs: 3_600_000,
};

describe('contested consumers on the dashboard', () => {
  it('are counted and linked in the providers table, their words escaped', () => {
    const provider = {
      provider: 'cache',
      healthy: true,
      consumers: 3,
      declared: 3,
      states: { held: 3 },
      firstApplies: null,
      contributionsError: null,
      paused: null,
      lastCheckAt: null,
      couldNotAsk: 0,
      suspects: null,
      deepCheckEveryMs: null,
      nodes: [],
      problems: [],
      contested: { count: 2, consumers: [contest] },
    };
    const report: StatusReport = {
      at: '2026-12-03T05:10:00.000Z',
      healthy: true,
      problems: [],
      unreadableShards: [],
      providers: [provider],
      total: 3,
      unserved: 0,
      listing: 'unserved',
      consumers: [],
    };
    const html = statusPage(report, {}, []);
    expect(html).toContain('<th>contested</th>');
    expect(html).toContain('<span class="mark">2</span>: <span title="cache/photos is contested since');
    expect(html).toContain('<a href="/consumer?key=cache%2Fphotos">cache/photos</a></span>, … 1 more');
    expect(html).not.toContain('<script>alert');
  });

  it("are said on the consumer's page, or that it is not, or that the queue's Redis did not answer", () => {
    const record = {
      _id: 'cache/photos',
      machine: { state: 'held', context: {} },
      stateSince: new Date('2026-12-03T04:00:00Z'),
      desired: { login: 'app_photos', source: 'cache.yaml:3' },
      appliedAt: null,
      history: [],
    } as unknown as StoredConsumer;
    const at = new Date('2026-12-03T05:10:00Z');
    const contested = consumerPage('cache/photos', undefined, record, at, [], contest);
    expect(contested).toContain(
      '<tr class="bad" id="contested"><th>contested</th><td>cache/photos is contested since 2026-12-03T05:00:00.000Z: changed outside holdfast 3 times',
    );
    expect(contested).toContain('&lt;script&gt;');
    expect(contested).not.toContain('<script>alert');
    expect(consumerPage('cache/photos', undefined, record, at, [], null)).toContain(
      '<tr><th>contested</th><td>no</td></tr>',
    );
    expect(consumerPage('cache/photos', undefined, record, at, [], 'unknown')).toContain(
      '<th>contested</th><td>unknown: the queue&#39;s Redis did not answer in time</td>',
    );
  });
});
