/**
 * The `redis-acl` values schema refuses raw ACL tokens and odd patterns; the policy check
 * names every field a consumer asks for beyond its provider's policy.
 */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import type { RedisAclValues } from '../../../src/adapters/redis-acl/index.js';

const values = (input: unknown) => redisAcl.valuesSchema.parse(input);
const refuses = (input: unknown) => !redisAcl.valuesSchema.safeParse(input).success;
const policy = (input: unknown = {}) => redisAcl.policySchema.parse(input);
const subject = (v: Partial<RedisAclValues>, id = 'photos', login = 'photos-app') => ({ id, login, values: values(v) });

describe('redis-acl values', () => {
  it('defaults to no keys, no channels and ordinary commands', () => {
    expect(values({})).toEqual({
      keys: [],
      channels: [],
      commands: ['+@read', '+@write', '+@connection', '-@dangerous'],
    });
  });

  it('accepts command rules in the documented syntax', () => {
    const commands = ['+@read', '-@dangerous', '+get', '+config|get', '-client|kill', '+json.get', '+georadius_ro'];
    expect(values({ commands }).commands).toEqual(commands);
  });

  it.each([
    'nopass',
    'allkeys',
    'allcommands',
    '>pw',
    '#abc',
    'on',
    'off',
    'reset',
    'resetkeys',
    '~*',
    '&*',
    '+GET',
    '+ get',
    '+',
    '+@',
    '@read',
    '(~x +get)',
    '%R~x',
  ])('refuses the raw ACL token %j as a command rule', (token) => {
    expect(refuses({ commands: [token] })).toBe(true);
  });

  it.each([' photos:*', 'photos :*', 'photos:\t*', 'photos:\n', 'a\u0000b', ''])(
    'refuses the pattern %j',
    (pattern) => {
      expect(refuses({ keys: [pattern] })).toBe(true);
      expect(refuses({ channels: [pattern] })).toBe(true);
    },
  );

  it('takes patterns as plain globs', () => {
    expect(values({ keys: ['photos:*', 'photos:[ab]?', '*'] }).keys).toEqual(['photos:*', 'photos:[ab]?', '*']);
  });

  it('refuses unknown fields', () => {
    expect(refuses({ keys: [], passwords: ['x'] })).toBe(true);
  });
});

describe('redis-acl policy', () => {
  it('has defaults that a default consumer within its prefix satisfies', () => {
    const p = policy();
    expect(p).toEqual({
      keyPrefix: '{id}:',
      channelPrefix: '{id}:',
      allowAllKeys: false,
      allowAllChannels: false,
      allowedCommands: ['+@read', '+@write', '+@connection', '+@pubsub'],
      allowAllCommands: false,
      deniedCommands: ['-@dangerous', '-@admin', '-function', '-pubsub', '-client|tracking'],
    });
    expect(
      redisAcl.violations(subject({ keys: ['photos:*', 'photos:thumbs:*'], channels: ['photos:events'] }), p),
    ).toEqual([]);
  });

  it('refuses key patterns outside the expanded prefix, naming field, index and value', () => {
    expect(redisAcl.violations(subject({ keys: ['photos:*', '*', 'billing:*'] }), policy())).toEqual([
      'values.keys[1]: "*" is outside the key prefix "photos:" allowed by the provider\'s policy',
      'values.keys[2]: "billing:*" is outside the key prefix "photos:" allowed by the provider\'s policy',
    ]);
  });

  it('refuses a pattern that only looks like the prefix', () => {
    expect(redisAcl.violations(subject({ keys: ['photo*'] }), policy())).toHaveLength(1);
    expect(redisAcl.violations(subject({ keys: ['photos*'] }), policy())).toHaveLength(1);
  });

  it('expands {login} as well as {id}', () => {
    const p = policy({ keyPrefix: 'app:{login}:', channelPrefix: '{id}.{login}.' });
    expect(redisAcl.violations(subject({ keys: ['app:photos-app:*'], channels: ['photos.photos-app.x'] }), p)).toEqual(
      [],
    );
    expect(redisAcl.violations(subject({ keys: ['app:photos:*'] }), p)).toEqual([
      'values.keys[0]: "app:photos:*" is outside the key prefix "app:photos-app:" allowed by the provider\'s policy',
    ]);
  });

  it('refuses channels outside the channel prefix', () => {
    expect(redisAcl.violations(subject({ channels: ['*'] }), policy())).toEqual([
      'values.channels[0]: "*" is outside the channel prefix "photos:" allowed by the provider\'s policy',
    ]);
  });

  it('allows every pattern with allowAllKeys / allowAllChannels', () => {
    const v = subject({ keys: ['*'], channels: ['*'] });
    expect(redisAcl.violations(v, policy({ allowAllKeys: true, allowAllChannels: true }))).toEqual([]);
    expect(redisAcl.violations(v, policy({ allowAllKeys: true }))).toEqual([
      'values.channels[0]: "*" is outside the channel prefix "photos:" allowed by the provider\'s policy',
    ]);
  });

  it('refuses + rules beyond allowedCommands, allows - rules, and subcommands of an allowed command', () => {
    const p = policy({ allowedCommands: ['+@read', '+config'] });
    const s = subject({ commands: ['+@read', '+config|get', '-@dangerous', '-flushall', '+@write', '+@all'] });
    expect(redisAcl.violations(s, p)).toEqual([
      'values.commands[4]: "+@write" is not among the commands allowed by the provider\'s policy (+@read +config)',
      'values.commands[5]: "+@all" is not among the commands allowed by the provider\'s policy (+@read +config)',
    ]);
  });

  it('allows "+@all" only with allowAllCommands', () => {
    expect(
      redisAcl.violations(subject({ commands: ['+@all', '-@dangerous'] }), policy({ allowAllCommands: true })),
    ).toEqual([]);
    expect(redisAcl.policySchema.safeParse({ allowedCommands: ['+@all'] }).success).toBe(false);
  });

  it('does not allow @keyspace by default: FLUSHALL, FLUSHDB, SWAPDB and KEYS live there', () => {
    expect(redisAcl.violations(subject({ commands: ['+@read', '+@keyspace'] }), policy())).toEqual([
      'values.commands[1]: "+@keyspace" is not among the commands allowed by the provider\'s policy (+@read +@write +@connection +@pubsub)',
    ]);
  });

  it('takes a deny list of "-" rules only, and an empty one', () => {
    expect(policy({ deniedCommands: ['-@dangerous', '-keys', '-client|list'] }).deniedCommands).toEqual([
      '-@dangerous',
      '-keys',
      '-client|list',
    ]);
    expect(policy({ deniedCommands: [] }).deniedCommands).toEqual([]);
    for (const bad of [['+@all'], ['-@dangerous', '+flushall'], ['reset'], ['-FLUSHALL'], 'nocommands']) {
      expect(redisAcl.policySchema.safeParse({ deniedCommands: bad }).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('refuses a prefix that does not keep consumers apart: no {id} or {login}, or nothing that separates it from the rest', () => {
    for (const keyPrefix of ['app:', '{id}', 'app:{id}', '{id}{login}:', '{id}x:']) {
      const parsed = redisAcl.policySchema.safeParse({ keyPrefix });
      expect(parsed.success, keyPrefix).toBe(false);
      expect(parsed.error?.issues[0]?.path, keyPrefix).toEqual(['keyPrefix']);
    }
    expect(redisAcl.policySchema.safeParse({ channelPrefix: 'events/{login}' }).success).toBe(false);
    for (const channelPrefix of ['{id}:', 'events/{login}/', '{{id}}', 'x-{id}.'])
      expect(redisAcl.policySchema.safeParse({ channelPrefix }).success, channelPrefix).toBe(true);
  });

  it('refuses an id that holds the separator its prefix puts after {id} ("-"), so that "team-" never covers "team-billing-"', () => {
    const p = policy({ keyPrefix: '{id}-' });
    expect(redisAcl.violations(subject({ keys: ['team-*'] }, 'team'), p)).toEqual([]);
    expect(redisAcl.violations(subject({ keys: ['team-billing-*'] }, 'team-billing'), p)).toEqual([
      expect.stringMatching(
        /^id: "team-billing" holds "-", the separator the provider's keyPrefix "\{id\}-" puts after \{id\}: a consumer whose id is "team" would own/,
      ),
    ]);
    // the default's ":" is in no id: ids with "-" or "." are fine
    expect(redisAcl.violations(subject({ keys: ['team-billing.eu:*'] }, 'team-billing.eu'), policy())).toEqual([]);
    // a namespace given whole is not judged
    expect(
      redisAcl.violations(subject({ keys: ['*'] }, 'team-billing'), policy({ keyPrefix: '{id}-', allowAllKeys: true })),
    ).toEqual([]);
  });

  it('refuses policies whose prefixes are patterns or empty, and unknown fields', () => {
    for (const bad of [
      { keyPrefix: 'a*' },
      { channelPrefix: '' },
      { keyPrefix: 'a b' },
      { allowedCommands: ['-@read'] },
      { allowKeys: true },
    ]) {
      expect(redisAcl.policySchema.safeParse(bad).success).toBe(false);
    }
  });

  it('says so when an id would turn the prefix into a pattern', () => {
    expect(redisAcl.violations(subject({ keys: ['a*:x'] }, 'a*'), policy())).toEqual([
      'values.keys: the key prefix "{id}:" expands to "a*:", which is a pattern, not a prefix',
    ]);
  });

  it('refuses logins holdfast reserves for its scratch users', () => {
    expect(redisAcl.violations(subject({}, 'x', 'holdfast-canon-1234'), policy())).toEqual([
      'login: "holdfast-canon-1234" starts with "holdfast-canon-", which holdfast reserves for its own use',
    ]);
  });
});
