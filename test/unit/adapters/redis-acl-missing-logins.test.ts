/**
 * The consumers one node lacks: marked by failed checks and applies, cleared by success there, bounded in number and in
 * time.
 */
import { describe, expect, it } from 'vitest';
import { MissingLogins } from '../../../src/adapters/redis-acl/missing-logins.js';

describe('the consumers a node lacks', () => {
  it('counts what the checks found missing there, and forgets each when it is applied, found held or removed there', () => {
    const missing = new MissingLogins(60_000);
    missing.mark('app_1', 'auth', 'the light check could not authenticate there');
    missing.mark('app_2', 'rules', 'not held there (missing)');
    missing.mark('app_3', 'failed', 'applying there failed (NOPERM)');
    expect(missing.count()).toEqual({ missing: 3, atLeast: false });
    expect(missing.why()).toBe('applying there failed (NOPERM)');
    missing.clear('app_3');
    missing.clear('app_2');
    expect(missing.count().missing).toBe(1);
    expect(missing.why()).toBe('the light check could not authenticate there');
    missing.clear('app_1');
    expect(missing.count().missing).toBe(0);
    expect(missing.why()).toBeUndefined();
  });

  it('keeps a failed apply as the reason when a light check confirms it missing, and lets a light check clear only its own mark', () => {
    const missing = new MissingLogins(60_000);
    missing.mark('app_1', 'failed', 'applying there failed (NOPERM)');
    missing.mark('app_1', 'auth', 'the light check could not authenticate there');
    expect(missing.why()).toBe('applying there failed (NOPERM)');
    missing.clear('app_1', 'auth'); // it authenticates there: its rules may still differ
    expect(missing.count().missing).toBe(1);
    missing.mark('app_2', 'auth', 'light');
    missing.clear('app_2', 'auth');
    expect(missing.count().missing).toBe(1);
  });

  it('forgets a mark not confirmed within its time, and remembers a bounded number of logins', () => {
    let now = 0;
    const missing = new MissingLogins(1_000, () => now, 3);
    for (const login of ['a', 'b', 'c', 'd']) missing.mark(login, 'rules', 'not held there');
    expect(missing.count()).toEqual({ missing: 3, atLeast: true });
    now = 500;
    missing.mark('a', 'rules', 'not held there');
    now = 1_200;
    expect(missing.count()).toEqual({ missing: 1, atLeast: false });
    missing.mark('e', 'failed', 'x'.repeat(10_000));
    expect(missing.why()!.length).toBeLessThanOrEqual(301);
  });
});
