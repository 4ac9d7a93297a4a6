/**
 * Redis 7.0's command rules evaluated as Redis applies them (`ACLSetSelector` in `src/acl.c`),
 * against the server's own command table: a rule list becomes the set of calls it allows. Two
 * lists that allow the same calls mean the same, however a server spells them (`ACL GETUSER`
 * writes its rules in its command tables' iteration order, which moves while a young server
 * rehashes). Pure; `test/integration/adapters/redis-acl-evaluate.test.ts` holds it to `ACL DRYRUN`.
 *
 * Redis keeps a bit per command and subcommand, and per command without subcommands a list of
 * allowed first arguments:
 * - `allcommands`/`+@all` sets every bit and allows commands added later (modules);
 *   `nocommands`/`-@all` and `reset` clear them; both forget the first arguments.
 * - `+cmd`/`-cmd` set or clear its bit and all its subcommands', and forget its first arguments;
 *   `-cmd|sub` clears a subcommand's bit; `+cmd|sub` sets it, or, on a command without
 *   subcommands, allows that first argument (`+select|0`).
 * - `+@cat`/`-@cat` do `+cmd`/`-cmd` for each command of the category (modules' aside), then
 *   for each subcommand of the category.
 * - A `no_auth` command (`AUTH`, `HELLO`) is allowed whatever the rules.
 */
import { BoundedCache } from '../bounded-cache.js';
import type { CommandEntry, CommandTable } from './command-table.js';

/** What a rule list allows, on one command table. */
export interface CommandSet {
  /** The calls allowed whole: commands without subcommands, and subcommands (`config|get`). */
  readonly allowed: ReadonlySet<string>;
  /** First arguments allowed of a command otherwise denied (`select` → `0`), lowercase. */
  readonly firstArgs: ReadonlyMap<string, ReadonlySet<string>>;
  /** Whether commands loaded later (by a module) are allowed: `+@all` not undone by `-@all`. */
  readonly future: boolean;
  /** The rules this server refuses (an unknown command, category or form), in order. */
  readonly refused: readonly string[];
}

interface State {
  bits: Set<string>;
  firstArgs: Map<string, Set<string>>;
  future: boolean;
  refused: string[];
}

function change(state: State, command: CommandEntry, allow: boolean): void {
  const set = (name: string) => (allow ? state.bits.add(name) : state.bits.delete(name));
  set(command.name);
  state.firstArgs.delete(command.name);
  for (const sub of command.subcommands) set(sub.name);
}

function byCategory(state: State, table: CommandTable, category: string, allow: boolean): void {
  for (const command of table.commands) {
    if (command.module) continue;
    if (command.categories.has(category)) change(state, command, allow);
    for (const sub of command.subcommands) if (sub.categories.has(category)) change(state, sub, allow);
  }
}

function every(state: State, table: CommandTable, allow: boolean): void {
  state.bits = allow ? new Set(table.all().map((c) => c.name)) : new Set();
  state.firstArgs.clear();
  state.future = allow;
}

/** `+name`: a command, a subcommand, or a first argument of a command without subcommands. */
function allowNamed(state: State, table: CommandTable, rule: string, name: string): void {
  const bar = name.lastIndexOf('|');
  if (bar < 0) {
    const command = table.lookup(name);
    if (command === undefined || command.child) state.refused.push(rule);
    else change(state, command, true);
    return;
  }
  const parent = table.lookup(name.slice(0, bar));
  const arg = name.slice(bar + 1).toLowerCase();
  if (parent === undefined || parent.child || arg === '') state.refused.push(rule);
  else if (parent.subcommands.length > 0) {
    const sub = table.lookup(name);
    if (sub === undefined) state.refused.push(rule);
    else change(state, sub, true);
  } else {
    const args = state.firstArgs.get(parent.name) ?? new Set<string>();
    args.add(arg);
    state.firstArgs.set(parent.name, args);
  }
}

/** Applies one rule (lowercase) to `state`, as `ACLSetSelector` does; a rule Redis refuses is noted. */
function apply(state: State, table: CommandTable, rule: string): void {
  if (rule === 'allcommands' || rule === '+@all') return every(state, table, true);
  if (rule === 'nocommands' || rule === '-@all' || rule === 'reset') return every(state, table, false);
  const sign = rule[0];
  if (sign !== '+' && sign !== '-') return; // not a command rule (keys, channels, flags): another part's
  const allow = sign === '+';
  if (rule[1] === '@') {
    const category = rule.slice(2);
    if (!table.categories.has(category)) state.refused.push(rule);
    else byCategory(state, table, category, allow);
    return;
  }
  if (allow) return allowNamed(state, table, rule, rule.slice(1));
  const command = table.lookup(rule.slice(1));
  if (command === undefined) state.refused.push(rule);
  else change(state, command, false);
}

const memos = new WeakMap<CommandTable, BoundedCache<string, CommandSet>>();
/** Rule lists remembered per table: the grants' few, and the spellings servers give them. */
const MEMO_SIZE = 256;

/** What `rules` allow on `table`, applied in order from a user that allows nothing. */
export function evaluateRules(rules: readonly string[], table: CommandTable): CommandSet {
  return remembered(rules.join(' '), table, () => rules);
}

/** `evaluateRules` of an `ACL GETUSER` `commands` text (rules one space apart). */
export function evaluateText(commands: string, table: CommandTable): CommandSet {
  return remembered(commands, table, () => commands.split(' ').filter((w) => w !== ''));
}

/** The set `key` (the rules, one space apart) names on `table`: remembered, or evaluated from `rulesOf()`. */
function remembered(key: string, table: CommandTable, rulesOf: () => readonly string[]): CommandSet {
  let memo = memos.get(table);
  if (memo === undefined) memos.set(table, (memo = new BoundedCache(MEMO_SIZE)));
  const known = memo.get(key);
  if (known !== undefined) return known;
  const evaluated = evaluate(rulesOf(), table);
  memo.set(key, evaluated);
  return evaluated;
}

function evaluate(rules: readonly string[], table: CommandTable): CommandSet {
  const state: State = { bits: new Set(), firstArgs: new Map(), future: false, refused: [] };
  for (const rule of rules) apply(state, table, rule.toLowerCase());
  const allowed = new Set<string>();
  for (const entry of table.callable()) if (entry.noAuth || state.bits.has(entry.name)) allowed.add(entry.name);
  const firstArgs = new Map([...state.firstArgs].filter(([name, args]) => !allowed.has(name) && args.size > 0));
  return { allowed, firstArgs, future: state.future, refused: state.refused };
}

/** Whether `set` lets a user run `name` (a command or `cmd|sub`), with `firstArg` as its first argument when given. */
export function permits(set: CommandSet, name: string, firstArg?: string): boolean {
  if (set.allowed.has(name)) return true;
  return firstArg !== undefined && set.firstArgs.get(name)?.has(firstArg.toLowerCase()) === true;
}

/** Whether a set allows no call at all (a selector that grants nothing). */
export function allowsNothing(set: CommandSet, table: CommandTable): boolean {
  return (
    set.firstArgs.size === 0 && !set.future && [...set.allowed].every((name) => table.lookup(name)?.noAuth === true)
  );
}

/** How two sets differ, by call: what only `actual` allows, and what only `expected` does. */
export interface CommandSetDifference {
  extra: string[];
  lacking: string[];
}

const argsOf = (set: CommandSet) => [...set.firstArgs].flatMap(([name, args]) => [...args].map((a) => `${name} ${a}`));

/** The calls (and first arguments: `select 0`) `actual` allows and `expected` does not, and the reverse; sorted. */
export function differences(actual: CommandSet, expected: CommandSet): CommandSetDifference {
  const only = (a: CommandSet, b: CommandSet) => {
    const calls = [...a.allowed].filter((n) => !b.allowed.has(n));
    const args = argsOf(a).filter((na) => {
      const [name, arg] = na.split(' ') as [string, string];
      return !permits(b, name, arg);
    });
    const future = a.future && !b.future ? ['commands loaded later'] : [];
    return [...calls, ...args].sort().concat(future);
  };
  return { extra: only(actual, expected), lacking: only(expected, actual) };
}
