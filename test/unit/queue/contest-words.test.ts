/**
 * What contested logins say (`src/queue/contest.ts`, `src/status/contested-status.ts`): the log's
 * sentence, a finding's words cut to a bound, what may be a loss wave (decided on the reason's
 * kind, never on words), and the status's line made inert for a terminal.
 */
import { describe, expect, it } from 'vitest';
import {
  CONTESTED_AFTER,
  FINDING_WORDS_MAX,
  contestedWords,
  findingWords,
  lossWaveMs,
  mayBeLossWave,
} from '../../../src/queue/contest.js';
import { formatStatus } from '../../../src/status/format-status.js';
import { contestedLine, contestedOf } from '../../../src/status/contested-status.js';
import type { StatusReport } from '../../../src/status/status-report.js';

describe('contested logins in words', () => {
  it('say the sentence of the issue', () => {
    expect(contestedWords('cache/photos', CONTESTED_AFTER, 3_600_000, 'rules-differ (+@all added)')).toBe(
      'cache/photos is contested: changed outside holdfast 3 times in 1h, last: rules-differ (+@all added)',
    );
  });

  it("make a finding's words from the deep check's reason, detail and node, cut to a bound", () => {
    expect(findingWords('password-differs', "the ACL user accepts 1 password(s), none of them the grant's")).toBe(
      "password-differs (the ACL user accepts 1 password(s), none of them the grant's)",
    );
    expect(findingWords('missing', 'no such ACL user', '10.0.0.6:6379')).toBe(
      'missing on 10.0.0.6:6379 (no such ACL user)',
    );
    const long = findingWords('rules-differ', 'x'.repeat(1000));
    expect(long).toHaveLength(FINDING_WORDS_MAX);
    expect(long.endsWith('…)')).toBe(true);
  });

  it('take only a login gone (missing) as possibly part of a loss wave, by its kind', () => {
    expect(mayBeLossWave('missing')).toBe(true);
    for (const kind of ['rules-differ', 'password-differs', 'disabled', 'roles-differ'])
      expect(mayBeLossWave(kind)).toBe(false);
    // the words do not decide: a detail that says "missing" is still a rules difference
    expect(mayBeLossWave('rules-differ')).toBe(false);
    expect(lossWaveMs(60_000)).toBe(120_000);
  });

  it('show each contested consumer in the status, inert on a terminal', () => {
    const contested = contestedOf({
      count: 2,
      listed: [
        {
          key: 'cache/photos',
          findings: 4,
          since: Date.UTC(2026, 11, 3, 5),
          until: Date.UTC(2026, 11, 3, 6, 30),
          last: 'rules-differ (keys: "~\u001b[2Jx")',
          windowMs: 3_600_000,
        },
      ],
    });
    expect(contestedLine(contested.consumers[0]!)).toBe(
      'cache/photos is contested since 2026-12-03T05:00:00.000Z: changed outside holdfast 4 times (3 within 1h make it so), last: rules-differ (keys: "~\u001b[2Jx"); ' +
        'holdfast put it back each time; contested until 2026-12-03T06:30:00.000Z unless changed again',
    );
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
      contested,
    };
    const report: StatusReport = {
      at: new Date().toISOString(),
      healthy: true,
      problems: [],
      unreadableShards: [],
      providers: [provider],
      total: 3,
      unserved: 0,
      listing: 'unserved',
      consumers: [],
    };
    const text = formatStatus(report);
    expect(text).toContain('contested: 2 consumers changed outside holdfast again and again');
    expect(text).toContain('cache/photos is contested since');
    expect(text).toContain('… and 1 more');
    expect(text).not.toContain('\u001b');
    expect(text).toContain('all 3 consumers held');
  });
});
