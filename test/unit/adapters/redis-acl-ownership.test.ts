/**
 * The `redis-acl` mark and deny list as pure rules: what `ACL SETUSER` is sent (deny list after
 * the consumer's rules, the mark last), how a mark is read back from `ACL GETUSER`, and which
 * logins a provider may claim.
 */
import { describe, expect, it } from 'vitest';
import { compareUser, type ExpectedUser } from '../../../src/adapters/redis-acl/acl-compare.js';
import { effectiveCommands, parseGetUser, userRules, type AclUser } from '../../../src/adapters/redis-acl/acl-rules.js';
import { smallTable } from './redis-command-table-fixture.js';
import { claimProblem, ownersOf } from '../../../src/adapters/redis-acl/ownership.js';

const HASH = 'a'.repeat(64);
const table = smallTable();

/** An `ACL GETUSER` reply as Redis 7.0 sends it (RESP2), with `selectors` given as field/value lists. */
function reply(selectors: Array<{ commands?: string; keys?: string; channels: string }>, channels = ''): unknown[] {
  return [
    'flags',
    ['on', 'sanitize-payload'],
    'passwords',
    [HASH],
    'commands',
    '-@all +get',
    'keys',
    '~photos:*',
    'channels',
    channels,
    'selectors',
    selectors.map((s) => ['commands', s.commands ?? '-@all', 'keys', s.keys ?? '', 'channels', s.channels]),
  ];
}

const user = (...args: Parameters<typeof reply>): AclUser => parseGetUser(reply(...args))!;
const expected = (owner = 'cache'): ExpectedUser => ({
  passwordHash: HASH,
  keys: ['photos:*'],
  channels: [],
  rules: ['+get'],
  asked: ['+get'],
  owner,
});
const never = new Set(['default', 'admin']);

describe('redis-acl: what ACL SETUSER is sent', () => {
  it("puts the deny list after the consumer's rules and the mark last, as a selector", () => {
    const commands = effectiveCommands(['+@read', '+@all'], ['-@dangerous', '-@admin']);
    expect(commands).toEqual(['+@read', '+@all', '-@dangerous', '-@admin']);
    const rules = userRules({ passwordHash: HASH, keys: ['photos:*'], channels: ['*'], commands, owner: 'cache' });
    expect(rules).toEqual([
      'reset',
      'resetchannels',
      'on',
      `#${HASH}`,
      '~photos:*',
      '&*',
      '+@read',
      '+@all',
      '-@dangerous',
      '-@admin',
      '(resetchannels &holdfast-managed:cache)',
    ]);
  });
});

describe('redis-acl: reading the mark', () => {
  it("reads owners from selectors only, never from the user's own channels", () => {
    expect(ownersOf(user([{ channels: '&holdfast-managed:cache' }]))).toEqual(['cache']);
    // a consumer allowed every channel could name one that looks like a mark: it is not one
    expect(ownersOf(user([], '&holdfast-managed:cache'))).toEqual([]);
    expect(ownersOf(user([{ channels: '&holdfast-managed:a' }, { channels: '&holdfast-managed:b' }]))).toEqual([
      'a',
      'b',
    ]);
  });

  it("holds a marked user, and says rules-differ with the reason when the mark is missing or another's", () => {
    expect(compareUser(user([{ channels: '&holdfast-managed:cache' }]), expected(), table)).toEqual({ held: true });
    expect(compareUser(user([]), expected(), table)).toEqual({
      held: false,
      reason: 'rules-differ',
      detail:
        'mark: the ACL user lacks holdfast\'s mark for provider "cache" ("&holdfast-managed:cache" in a selector); holdfast does not take it for its own',
    });
    expect(compareUser(user([{ channels: '&holdfast-managed:other' }]), expected(), table)).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: 'mark: the ACL user carries the mark of provider "other", not "cache"\'s alone',
    });
  });

  it('says rules-differ when the mark selector is given rights or another selector that allows calls sits beside it', () => {
    const granting = compareUser(
      user([{ channels: '&holdfast-managed:cache', commands: '-@all +get', keys: '~*' }]),
      expected(),
      table,
    );
    expect(granting).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining(
        'selectors: the backend has 1 selector(s) that allow calls, "(~* &holdfast-managed:cache -@all +get)"',
      ) as unknown,
    });
    const beside = compareUser(
      user([{ channels: '&holdfast-managed:cache' }, { channels: '', keys: '~secret:*', commands: '-@all +get' }]),
      expected(),
      table,
    );
    expect(beside).toMatchObject({
      held: false,
      reason: 'rules-differ',
      detail: expect.stringContaining('1 selector(s) that allow calls, "(~secret:* -@all +get)"') as unknown,
    });
  });
});

describe('redis-acl: which logins a provider may claim', () => {
  const own = { provider: 'cache', adopt: false };
  const adopting = { provider: 'cache', adopt: true };

  it('claims a login that does not exist, or carries its own mark', () => {
    expect(claimProblem('app', null, own, never)).toBeUndefined();
    expect(claimProblem('app', user([{ channels: '&holdfast-managed:cache' }]), own, never)).toBeUndefined();
  });

  it('refuses a login without its mark, naming login, provider and adopt; takes it with adopt', () => {
    expect(claimProblem('app', user([]), own, never)).toBe(
      'the ACL user "app" exists but was not made by holdfast for provider "cache" (it lacks the mark "&holdfast-managed:cache"); it is left as it is; give the consumer another login, or set adopt: true on provider "cache" to take it over',
    );
    expect(claimProblem('app', user([]), adopting, never)).toBeUndefined();
  });

  it("refuses another provider's login, adopt or not", () => {
    for (const ownership of [own, adopting]) {
      expect(claimProblem('app', user([{ channels: '&holdfast-managed:other' }]), ownership, never)).toMatch(
        /^the ACL user "app" carries the mark of provider "other", not "cache"'s; .*adopt does not take another provider's login/,
      );
      expect(
        claimProblem(
          'app',
          user([{ channels: '&holdfast-managed:cache' }, { channels: '&holdfast-managed:other' }]),
          ownership,
          never,
        ),
      ).toBeDefined();
    }
  });

  it("never claims default, the admin's login or a scratch login, adopt or not, existing or not", () => {
    for (const ownership of [own, adopting]) {
      expect(claimProblem('default', user([]), ownership, never)).toMatch(
        /^the login "default" is Redis's default user; .*adopt or not/,
      );
      expect(claimProblem('admin', null, ownership, never)).toMatch(/^the login "admin" is the admin's own login/);
      expect(claimProblem('holdfast-canon-1234', null, ownership, never)).toMatch(/reserves for its own use/);
    }
  });
});
