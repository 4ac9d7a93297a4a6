/**
 * Redis command rules evaluated as Redis 7.0 applies them (`acl-evaluate.ts`), and an `ACL GETUSER`
 * reply compared with a grant by meaning (`acl-compare.ts`), on a small command table. The
 * generated test against a real server (`test/integration/adapters/redis-acl-evaluate.test.ts`)
 * holds the evaluator to `ACL DRYRUN` on the server's whole table.
 */
import { describe, expect, it } from 'vitest';
import { compareUser, type ExpectedUser } from '../../../src/adapters/redis-acl/acl-compare.js';
import { differences, evaluateRules, evaluateText, permits } from '../../../src/adapters/redis-acl/acl-evaluate.js';
import { parseGetUser } from '../../../src/adapters/redis-acl/acl-rules.js';
import { DEFAULT_DENIED_COMMANDS } from '../../../src/adapters/redis-acl/policy.js';
import { smallTable } from './redis-command-table-fixture.js';

const table = smallTable();
const allowed = (rules: string) => [...evaluateText(rules, table).allowed].sort();
const may = (rules: string, name: string, arg?: string) => permits(evaluateText(rules, table), name, arg);

describe('redis-acl: command rules evaluated as Redis applies them', () => {
  it('allows nothing but the no_auth commands from nothing, and everything (modules too) with +@all', () => {
    expect(allowed('')).toEqual(['auth']);
    expect(allowed('-@all')).toEqual(['auth']);
    const all = evaluateText('+@all', table);
    expect(all.future).toBe(true);
    expect(permits(all, 'modcmd')).toBe(true);
    expect(allowed('allcommands')).toEqual(allowed('+@all'));
    expect(evaluateText('+@all -get', table).future).toBe(true); // a command denied leaves the modules' to come
    expect(evaluateText('+@all nocommands', table).future).toBe(false);
    expect(allowed('+@all +select|0 reset')).toEqual(['auth']); // reset: -@all, among the rest
    expect(evaluateText('+@all reset', table).future).toBe(false);
  });

  it('applies rules in order: the last one wins', () => {
    expect(may('+@read -@dangerous', 'keys')).toBe(false);
    expect(may('-@dangerous +@read', 'keys')).toBe(true);
    expect(may('+get -get', 'get')).toBe(false);
  });

  it("leaves modules' commands to +@all: a category passes them by", () => {
    expect(may('+@read', 'modcmd')).toBe(false);
  });

  it('allows or denies a container with all its subcommands, and a subcommand alone', () => {
    expect(allowed('+config')).toEqual(['auth', 'config|get', 'config|help', 'config|set']);
    expect(allowed('+config -config|set')).toEqual(['auth', 'config|get', 'config|help']);
    expect(allowed('+config|get')).toEqual(['auth', 'config|get']);
    expect(allowed('+@all -config')).not.toContain('config|help');
  });

  it("sets a container's every subcommand when the container is in the category, and each subcommand by its own", () => {
    // CONFIG is @slow itself: +@slow allows every subcommand; -@dangerous takes back only the dangerous ones
    expect(allowed('+@slow -@dangerous')).toEqual(
      expect.arrayContaining(['config|help', 'client|tracking', 'pubsub|numpat', 'function|list']) as unknown,
    );
    expect(allowed('+@slow -@dangerous')).not.toContain('config|get');
    expect(allowed('+@connection')).toEqual(['auth', 'client|id', 'client|list', 'client|tracking', 'ping', 'select']);
  });

  it("allows a command's first argument where it has no subcommands, until a rule names the command again", () => {
    expect(may('+select|0', 'select', '0')).toBe(true);
    expect(may('+select|0', 'select', '1')).toBe(false);
    expect(may('+select|0', 'select')).toBe(false);
    expect(may('+select|0 -select', 'select', '0')).toBe(false);
    expect(may('+select|0 -@connection', 'select', '0')).toBe(false); // a category naming it forgets the argument
    expect(may('+select|0 -@read', 'select', '0')).toBe(true); // one that does not, keeps it
    expect(may('+select|0 -@all +get', 'select', '0')).toBe(false);
    expect(evaluateText('+select|0 +select', table).firstArgs.size).toBe(0); // allowed whole: the argument means nothing
  });

  it('notes the rules Redis refuses, and applies the others', () => {
    const set = evaluateText('+get -select|0 +nosuch +@nosuch +config|nosuch +config|get|x -nosuch|sub +set', table);
    expect(set.refused).toEqual(['-select|0', '+nosuch', '+@nosuch', '+config|nosuch', '+config|get|x', '-nosuch|sub']);
    expect([...set.allowed].sort()).toEqual(['auth', 'get', 'set']);
  });

  it('keeps a tenant to its own with the default deny list: PUBSUB, FUNCTION and CLIENT TRACKING withheld, PUBLISH kept', () => {
    const rules = ['+@read', '+@write', '+@connection', '+@pubsub', ...DEFAULT_DENIED_COMMANDS].join(' ');
    for (const call of [
      'pubsub|numpat',
      'pubsub|channels',
      'function|flush',
      'client|tracking',
      'client|list',
      'keys',
    ]) {
      expect(may(rules, call)).toBe(false);
    }
    for (const call of ['get', 'set', 'publish', 'client|id', 'select', 'ping']) expect(may(rules, call)).toBe(true);
  });

  it('finds two spellings of the same rules the same, and names what differs by call', () => {
    const grant = evaluateRules(['+@read', '+@write', '-@dangerous', '-function'], table);
    expect(differences(evaluateText('-@all +get +set', table), grant)).toEqual({ extra: [], lacking: [] });
    expect(differences(evaluateText('-@all +set +get', table), grant)).toEqual({ extra: [], lacking: [] });
    expect(differences(evaluateText('-@all +set +flushdb +select|0', table), grant)).toEqual({
      extra: ['flushdb', 'select 0'],
      lacking: ['get'],
    });
    expect(
      differences(evaluateText('+@all -@dangerous', table), evaluateText('-@all +@all -@dangerous', table)),
    ).toEqual({
      extra: [],
      lacking: [],
    });
  });
});

const HASH = 'a'.repeat(64);
const ASKED = ['+@read', '+@write', '+@connection', '+@pubsub'];
const expected: ExpectedUser = {
  passwordHash: HASH,
  keys: ['app:*'],
  channels: ['app:*'],
  rules: [...ASKED, ...DEFAULT_DENIED_COMMANDS],
  asked: ASKED,
  owner: 'cache',
};

function reply(commands: string, keys = '~app:*', channels = '&app:*'): unknown[] {
  return [
    'flags',
    ['on'],
    'passwords',
    [HASH],
    'commands',
    commands,
    'keys',
    keys,
    'channels',
    channels,
    'selectors',
    [['commands', '-@all', 'keys', '', 'channels', '&holdfast-managed:cache']],
  ];
}

const compare = (...args: Parameters<typeof reply>) => compareUser(parseGetUser(reply(...args)), expected, table);
/** The grant's rules as Redis 7.0.15 might write them, in one order and in another. */
const SPELLED = '-@all +@read +@write +@connection +@pubsub -@dangerous -@admin -function -pubsub -client|tracking';
const RESPELLED = '-@all +get +set +select +ping +publish +client|id';

describe('redis-acl: an ACL GETUSER reply compared with a grant by meaning', () => {
  it('holds the same rules however they are spelled', () => {
    expect(compare(SPELLED)).toEqual({ held: true });
    expect(compare(RESPELLED)).toEqual({ held: true });
    expect(compare('-@all +client|id +publish +ping +select +set +get')).toEqual({ held: true });
    expect(compare(SPELLED, '%RW~app:*')).toEqual({ held: true });
  });

  it('names each call the backend allows beyond the grant, and those the deny list withholds', () => {
    expect(compare(`${SPELLED} +config|help`)).toEqual({
      held: false,
      reason: 'rules-differ',
      detail: 'commands: the backend also allows CONFIG|HELP',
    });
    expect(compare(`${SPELLED} +flushdb`)).toEqual({
      held: false,
      reason: 'rules-differ',
      detail: 'commands: the backend allows FLUSHDB, which the deny list withholds',
    });
    expect(compare(`${SPELLED} +pubsub|numpat`)).toEqual({
      held: false,
      reason: 'rules-differ',
      detail: 'commands: the backend allows PUBSUB|NUMPAT, which the deny list withholds',
    });
    expect(compare(`${SPELLED} -get +select|0 -select`)).toEqual({
      held: false,
      reason: 'rules-differ',
      detail: 'commands: the backend lacks GET, SELECT',
    });
  });

  it("says a grant's rules the server refuses by their count, never their text, and a backend's unknown command by name", () => {
    const hostile = compareUser(
      parseGetUser(reply(SPELLED)),
      { ...expected, rules: [...expected.rules, '+hfbogus-secret-looking'] },
      table,
    );
    expect(hostile).toEqual({
      held: false,
      reason: 'rules-differ',
      detail:
        "commands: this server refuses 1 of the grant's command rules (no such command, subcommand or category here)",
    });
    expect(compare(`${SPELLED} +mymodule.cmd`)).toMatchObject({
      detail: "commands: the backend's rules name +MYMODULE.CMD, which this server's command table lacks",
    });
  });

  it('compares keys with their read and write permissions, and channels as sets', () => {
    expect(compare(SPELLED, '%R~app:*')).toMatchObject({
      reason: 'rules-differ',
      detail: 'keys: the backend lacks %W~app:* (the backend has "%R~app:*", the grant asks for "~app:*")',
    });
    expect(compare(SPELLED, '~app:* %W~other:*')).toMatchObject({
      detail: expect.stringMatching(/^keys: the backend also allows %W~other:\* \(/) as unknown,
    });
    expect(compare(SPELLED, '~*')).toMatchObject({
      detail: expect.stringMatching(/^keys: the backend also allows ~\*/) as unknown,
    });
    expect(compare(SPELLED, '~app:*', '&*')).toMatchObject({
      detail: expect.stringMatching(/^channels: the backend also allows &\* and lacks &app:\*/) as unknown,
    });
  });
});
