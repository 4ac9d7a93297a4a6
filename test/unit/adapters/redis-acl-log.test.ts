/**
 * `ACL LOG` read into entries, and the cursor that reports each failed login once: by entry id
 * (Redis 7.2) and by count and last update (Redis 7.0, which has neither id nor creation time),
 * a grouped entry's growth counted and nothing counted twice, a full log of unread entries said.
 */
import { describe, expect, it } from 'vitest';
import { authEntries, type AclLogEntry } from '../../../src/adapters/redis-acl/acl-log.js';
import { AclLogCursor } from '../../../src/adapters/redis-acl/acl-log-cursor.js';

/** One reply entry as Redis 7.0 gives it. */
function raw70(username: string, count: number, ageS: number, addr = '10.0.0.7:51234'): unknown[] {
  return [
    'count',
    count,
    'reason',
    'auth',
    'context',
    'toplevel',
    'object',
    'AUTH',
    'username',
    username,
    'age-seconds',
    String(ageS),
    'client-info',
    `id=7 addr=${addr} laddr=127.0.0.1:6379 fd=8 name= age=0 user=default`,
  ];
}

const entry = (username: string, count: number, lastUpdated: number, entryId?: number): AclLogEntry => ({
  entryId,
  count,
  username,
  context: 'toplevel',
  object: 'AUTH',
  address: '10.0.0.7:1',
  lastUpdated,
});

const counted = (read: ReturnType<AclLogCursor['read']>) => read.fresh.map((f) => [f.entry.username, f.count]);

describe('ACL LOG entries', () => {
  it('reads auth entries with their address and last update, and leaves other reasons out', () => {
    const reply = [raw70('app', 3, 2.5), [...raw70('x', 1, 0).slice(0, 2), 'reason', 'command']];
    const [read] = authEntries(reply, 100_000);
    expect(read).toEqual({
      entryId: undefined,
      count: 3,
      username: 'app',
      context: 'toplevel',
      object: 'AUTH',
      address: '10.0.0.7:51234',
      lastUpdated: 97_500,
    });
    expect(authEntries(reply, 0)).toHaveLength(1);
  });

  it("makes a tenant's login inert and bounded", () => {
    const [read] = authEntries([raw70(`\u001b[31mred\u202e${'x'.repeat(500)}`, 1, 0)], 0);
    expect([...read!.username].some((ch) => ch === '\u001b' || ch === '\u202e')).toBe(false);
    expect(read!.username.startsWith('\\u001b[31mred\\u202e')).toBe(true);
    expect(read!.username.length).toBeLessThanOrEqual(128);
  });
});

describe('the cursor, Redis 7.0 (no entry id)', () => {
  it('learns where the log stands first, then counts only what is new: a grouped entry read again is not counted again, its growth is', () => {
    const cursor = new AclLogCursor();
    expect(counted(cursor.read([entry('old', 9, 1_000)], false))).toEqual([]);
    expect(counted(cursor.read([entry('app', 3, 5_000), entry('old', 9, 1_000)], false))).toEqual([['app', 3]]);
    // read again, unchanged (its last update is the same): nothing new
    expect(counted(cursor.read([entry('app', 3, 5_200), entry('old', 9, 1_100)], false))).toEqual([]);
    // grown by 2 (moved to the head, updated later)
    expect(counted(cursor.read([entry('app', 5, 9_000), entry('old', 9, 1_000)], false))).toEqual([['app', 2]]);
  });

  it("a login's new entry beside its older one (grouping ends after 60 s) is new whole; the older is not counted again", () => {
    const cursor = new AclLogCursor();
    cursor.read([entry('app', 4, 1_000)], false);
    expect(counted(cursor.read([entry('app', 1, 70_000), entry('app', 4, 1_000)], false))).toEqual([['app', 1]]);
    expect(counted(cursor.read([entry('app', 2, 71_000), entry('app', 4, 1_000)], false))).toEqual([['app', 1]]);
  });

  it('says entries may have been lost when a full log holds none already read', () => {
    const cursor = new AclLogCursor();
    cursor.read([entry('a', 1, 1_000)], false);
    expect(cursor.read([entry('b', 1, 2_000), entry('c', 1, 2_000)], true).lost).toBe(true);
    expect(cursor.read([entry('d', 1, 3_000), entry('b', 1, 2_000)], true).lost).toBe(false);
  });
});

describe('the cursor, Redis 7.2 (entry id)', () => {
  it('counts each id once, its growth, and says a gap in a full log', () => {
    const cursor = new AclLogCursor();
    cursor.read([entry('app', 2, 1_000, 4)], false);
    expect(counted(cursor.read([entry('app', 5, 2_000, 4)], false))).toEqual([['app', 3]]);
    const read = cursor.read([entry('x', 1, 3_000, 9), entry('y', 1, 3_000, 8)], true);
    expect(counted(read)).toEqual([
      ['x', 1],
      ['y', 1],
    ]);
    expect(read.lost).toBe(true);
    expect(cursor.read([entry('z', 1, 4_000, 10), entry('x', 1, 3_000, 9)], true).lost).toBe(false);
  });

  it('a restarted server numbers from 0 again: its entries are new', () => {
    const cursor = new AclLogCursor();
    cursor.read([entry('app', 1, 1_000, 40)], false);
    expect(counted(cursor.read([entry('app', 2, 5_000, 0)], false))).toEqual([['app', 2]]);
  });
});
