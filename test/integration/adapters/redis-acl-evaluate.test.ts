/**
 * holdfast's evaluation of Redis command rules (`acl-evaluate.ts`) held to Redis itself: random
 * rule lists built from a real server's own categories, commands, subcommands and the default
 * deny list's shapes are set on a user, and for every command and subcommand of the server's
 * table (and each first argument a rule names) `ACL DRYRUN` is the oracle. The evaluator must
 * agree for the rule list itself and for the `commands` text `ACL GETUSER` returns for it.
 *
 * Fail-without (each made by hand, seen failing, reverted): an evaluator that ignores `-cmd|sub`
 * (shrunk to `+@read +@write +@connection +@pubsub -xinfo|groups +expireat`: "DRYRUN allows xinfo
 * groups: false, the evaluator: true"); one where `-cmd`/`-@cat` keep a command's first arguments
 * (`+keys|0 -@dangerous …`: "DRYRUN allows keys 0: false, the evaluator: true").
 */
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRules, evaluateText, permits } from '../../../src/adapters/redis-acl/acl-evaluate.js';
import { parseGetUser } from '../../../src/adapters/redis-acl/acl-rules.js';
import {
  COMMAND_TABLE_QUERY,
  parseCommandTable,
  type CommandTable,
} from '../../../src/adapters/redis-acl/command-table.js';
import { DEFAULT_ALLOWED_COMMANDS, DEFAULT_DENIED_COMMANDS } from '../../../src/adapters/redis-acl/policy.js';
import { sharedBackend } from '../../backends/index.js';

const USER = `hf_dryrun_${process.pid}`;
/** Runs of the property: each sets a user and asks DRYRUN of every call in one pipeline (~10 ms). */
const RUNS = 300;
const FIRST_ARGS = ['0', '1', 'get', 'x'];

/** One call as DRYRUN asks it: its words, with arguments enough for its arity. */
interface Call {
  name: string;
  firstArg?: string;
  words: string[];
}

function callOf(name: string, arity: number, firstArg?: string): Call {
  const words = name.split('|');
  if (firstArg !== undefined) words.push(firstArg);
  const needed = arity > 0 ? arity : -arity;
  while (words.length < needed) words.push(`hf-arg-${words.length}`);
  return { name, words, ...(firstArg !== undefined ? { firstArg } : {}) };
}

/** Every call of the table, and each command's first arguments where a rule may name one. */
function callsOf(table: CommandTable): Call[] {
  const calls = table.callable().map((c) => callOf(c.name, c.arity));
  for (const c of table.commands) {
    if (c.subcommands.length > 0 || c.arity === 1 || c.module) continue;
    for (const arg of FIRST_ARGS) calls.push(callOf(c.name, c.arity, arg));
  }
  return calls;
}

/** A rule Redis accepts, built from the table: categories, commands, subcommands, first arguments, the deny list's. */
function ruleOf(table: CommandTable): fc.Arbitrary<string> {
  const categories = [...table.categories];
  const commands = table.commands.filter((c) => !c.module);
  const subs = commands.flatMap((c) => c.subcommands.map((s) => s.name));
  const leaves = commands.filter((c) => c.subcommands.length === 0 && c.arity !== 1).map((c) => c.name);
  const sign = fc.constantFrom('+', '-');
  return fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('+@all', '-@all', 'allcommands', 'nocommands') },
    { weight: 4, arbitrary: fc.tuple(sign, fc.constantFrom(...categories)).map(([s, c]) => `${s}@${c}`) },
    { weight: 3, arbitrary: fc.tuple(sign, fc.constantFrom(...commands.map((c) => c.name))).map(([s, c]) => s + c) },
    { weight: 3, arbitrary: fc.tuple(sign, fc.constantFrom(...subs)).map(([s, c]) => s + c) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...leaves), fc.constantFrom(...FIRST_ARGS)).map(([c, a]) => `+${c}|${a}`),
    },
    { weight: 2, arbitrary: fc.constantFrom(...DEFAULT_ALLOWED_COMMANDS, ...DEFAULT_DENIED_COMMANDS) },
    // `reset` forgets keys and channels too: given back, so that DRYRUN judges the command alone
    { weight: 1, arbitrary: fc.constant('reset allkeys allchannels') },
  );
}

/** A rule list: random rules, sometimes the README's consumer rules and the deny list around them. */
function rulesOf(table: CommandTable): fc.Arbitrary<string[]> {
  return fc
    .tuple(fc.boolean(), fc.array(ruleOf(table), { minLength: 1, maxLength: 10 }), fc.boolean())
    .map(([readme, rules, denied]) => [
      ...(readme ? DEFAULT_ALLOWED_COMMANDS : []),
      ...rules.flatMap((r) => r.split(' ')),
      ...(denied ? DEFAULT_DENIED_COMMANDS : []),
    ]);
}

describe('redis-acl: command rules evaluated as the server itself applies them (ACL DRYRUN)', () => {
  const b = sharedBackend('redis');
  let admin: Redis;
  let table: CommandTable;
  let calls: Call[];

  beforeAll(async () => {
    admin = new Redis(b.url, { maxRetriesPerRequest: 0 });
    const [commands, categories] = await Promise.all(COMMAND_TABLE_QUERY.map(([c, ...a]) => admin.call(c, ...a)));
    table = parseCommandTable(commands, categories);
    calls = callsOf(table);
  });
  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', USER);
    admin.disconnect();
  });

  /** What DRYRUN says of each call for the user as it is now: allowed or not. */
  async function oracle(): Promise<boolean[]> {
    const pipeline = admin.pipeline();
    for (const call of calls) pipeline.call('ACL', 'DRYRUN', USER, ...call.words);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([error, reply], i) => {
      if (error) throw new Error(`ACL DRYRUN ${calls[i]!.words.join(' ')}: ${error.message}`);
      const text = String(reply);
      if (text === 'OK') return true;
      if (text.startsWith('This user has no permissions to run')) return false;
      throw new Error(`ACL DRYRUN ${calls[i]!.words.join(' ')} answered "${text}"`);
    });
  }

  it('reads a whole table: commands, subcommands and categories', () => {
    expect(table.commands.length).toBeGreaterThan(150);
    expect(table.lookup('client|tracking')?.categories.has('connection')).toBe(true);
    expect(table.lookup('auth')?.noAuth).toBe(true);
    expect(table.categories.has('dangerous')).toBe(true);
  });

  it('agrees with ACL DRYRUN on every call, for the rule list and for the text ACL GETUSER gives back', async () => {
    await fc.assert(
      fc.asyncProperty(rulesOf(table), async (rules) => {
        await admin.call('ACL', 'SETUSER', USER, 'reset', 'on', 'nopass', 'allkeys', 'allchannels', ...rules);
        const truth = await oracle();
        const text = parseGetUser(await admin.call('ACL', 'GETUSER', USER))!.commands;
        const fromRules = evaluateRules(rules, table);
        const fromText = evaluateText(text, table);
        expect(fromRules.refused).toEqual([]);
        expect(fromText.refused).toEqual([]);
        const disagree = (set: typeof fromRules) =>
          calls.flatMap((call, i) =>
            permits(set, call.name, call.firstArg) === truth[i]
              ? []
              : [`DRYRUN allows ${call.words.slice(0, 2).join(' ')}: ${truth[i]}, the evaluator: ${!truth[i]}`],
          );
        expect({ rules: rules.join(' '), disagree: disagree(fromRules) }).toEqual({
          rules: rules.join(' '),
          disagree: [],
        });
        expect({ text, disagree: disagree(fromText) }).toEqual({ text, disagree: [] });
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
