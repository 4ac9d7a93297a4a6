/** The plan's exit code, its text, and how `--contributions` is read. */
import { describe, expect, it } from 'vitest';
import { proposedFiles } from '../../../src/cli/plan-command.js';
import { removalsHeldBack } from '../../../src/desired/desired-change.js';
import { formatPlan } from '../../../src/plan/format-plan.js';
import { planExitCode, type ProviderPlan } from '../../../src/plan/plan-report.js';

const empty = (more: Partial<ProviderPlan> = {}): ProviderPlan => ({
  provider: 'cache',
  adapter: 'redis-acl',
  management: 'manage',
  file: '/c.yaml',
  invalid: null,
  create: [],
  change: [],
  remove: null,
  refused: [],
  drifted: [],
  notAsked: [],
  unchanged: 3,
  unreadable: 0,
  ...more,
});
const removal = {
  consumers: [{ key: 'cache/a', login: 'app_a' }],
  of: 3,
  heldBack: false,
  confirmed: false,
  guard: 'at most 25%',
  leavesLogins: false,
};

describe('planExitCode', () => {
  it('is 0 when nothing would change, 1 when something would, 2 on anything refused, invalid or not asked', () => {
    expect(planExitCode([empty()])).toBe(0);
    expect(planExitCode([empty({ create: [{ key: 'cache/a', login: 'a', source: 'f:1', notes: [] }] })])).toBe(1);
    expect(planExitCode([empty({ remove: removal })])).toBe(1);
    expect(
      planExitCode([empty({ drifted: [{ key: 'cache/a', login: 'a', reason: 'missing', detail: 'gone' }] })]),
    ).toBe(1);
    expect(
      planExitCode([
        empty({ remove: removal }),
        empty({ refused: [{ key: 'cache/b', problems: ['f:2: id: bad'], keepsAccepted: false }] }),
      ]),
    ).toBe(2);
    expect(planExitCode([empty({ invalid: ['f:1: (top level): the file is empty'] })])).toBe(2);
    expect(planExitCode([empty({ notAsked: [{ key: 'cache/a', why: 'timed out' }] })])).toBe(2);
  });
});

describe('formatPlan', () => {
  it('lists what is to be done and counts what is not', () => {
    const text = formatPlan({
      providers: [
        empty({ remove: { ...removal, heldBack: true, confirmWith: 'holdfast confirm-removals cache -c h.yaml' } }),
      ],
      exitCode: 1,
    });
    expect(text).toContain('  - remove  cache/a (login app_a)');
    expect(text).toContain('held back by the mass-removal guard: 1 removal of 3 consumers');
    expect(text).toContain('confirm with: holdfast confirm-removals cache -c h.yaml');
    expect(text).toContain('0 to create, 0 to change, 1 to remove (held back), 0 refused, 0 drifted now, 3 unchanged');
    expect(text).toMatch(/plan: changes would be made \(exit 1\)$/);
    expect(text).not.toContain('left on the backend');
    const kept = formatPlan({
      providers: [empty({ management: 'no-delete', remove: { ...removal, leavesLogins: true } })],
      exitCode: 1,
    });
    expect(kept).toContain('management: no-delete: their logins are left on the backend; only their records go');
  });
});

describe('proposedFiles', () => {
  const config = { source: '/etc/holdfast.yaml', providers: [{ name: 'cache' }, { name: 'ledger' }] } as Parameters<
    typeof proposedFiles
  >[0];
  it('reads <provider>=<file> pairs, each provider once', () => {
    expect([...proposedFiles(config, ['cache=/tmp/p.yaml'])]).toEqual([['cache', '/tmp/p.yaml']]);
    expect(() => proposedFiles(config, ['nope=/tmp/p.yaml'])).toThrow(
      expect.objectContaining({ code: 'PROVIDER_UNKNOWN' }),
    );
    expect(() => proposedFiles(config, ['cache'])).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => proposedFiles(config, ['cache=a', 'cache=b'])).toThrow(/given twice/);
  });
});

describe('removalsHeldBack', () => {
  it('holds back more than the share and more than the floor, as the sync does', () => {
    const guard = { removalGuard: { share: 0.25, floor: 2 } };
    expect(removalsHeldBack(guard, 2, 4)).toBe(false); // not more than the floor
    expect(removalsHeldBack(guard, 3, 20)).toBe(false); // not more than 25%
    expect(removalsHeldBack(guard, 4, 10)).toBe(true);
  });
});
