/**
 * What an `ACL GETUSER` reply means, compared with what a grant means: commands as the calls
 * they allow on the server's own command table (`acl-evaluate.ts`), keys and channels as sets
 * of patterns with their read/write permissions, passwords as a set, selectors by what they
 * allow. Never by how the server spells them. The detail names calls, patterns and fields,
 * never a password or a hash.
 */
import type { HoldsAnswer } from '../adapter.js';
import { ownedBy } from '../claim-login.js';
import { allowsNothing, differences, evaluateRules, evaluateText, permits, type CommandSet } from './acl-evaluate.js';
import { effectivePatterns, type AclSelector, type AclUser } from './acl-rules.js';
import type { CommandTable } from './command-table.js';
import { markChannel } from './acl-mark.js';
import { ownersOf } from './ownership.js';

/** What a grant should look like in `ACL GETUSER`. */
export interface ExpectedUser {
  passwordHash: string;
  /** During a rotation's overlap: other passwords beside the grant's are accepted. */
  othersAccepted?: boolean;
  keys: readonly string[];
  channels: readonly string[];
  /** The grant's command rules as applied: the consumer's, then the deny list (and what a Cluster's client needs). */
  rules: readonly string[];
  /** The consumer's own command rules, before the deny list: a call they allow and {@link rules} do not is withheld. */
  asked: readonly string[];
  /** The provider whose mark the user must carry. */
  owner: string;
}

/** Calls named in a detail at most; the rest are counted. */
const NAMED = 12;

const callName = (call: string) => call.toUpperCase();

function named(calls: readonly string[]): string {
  const shown = calls.slice(0, NAMED).map(callName).join(', ');
  return calls.length > NAMED ? `${shown} and ${calls.length - NAMED} more` : shown;
}

/**
 * Sets already compared (they are the evaluator's remembered ones: a deep check of a held consumer compares the same
 * pair each time), by `actual`, then `expected`, then `asked`.
 */
const compared = new WeakMap<CommandSet, WeakMap<CommandSet, WeakMap<CommandSet, { detail: string | undefined }>>>();

/** {@link describeDifference}, remembered per trio of sets. */
function commandDifference(actual: CommandSet, expected: CommandSet, asked: CommandSet): string | undefined {
  let byExpected = compared.get(actual);
  if (byExpected === undefined) compared.set(actual, (byExpected = new WeakMap()));
  let byAsked = byExpected.get(expected);
  if (byAsked === undefined) byExpected.set(expected, (byAsked = new WeakMap()));
  let known = byAsked.get(asked);
  if (known === undefined) byAsked.set(asked, (known = { detail: describeDifference(actual, expected, asked) }));
  return known.detail;
}

/** What differs between the calls `actual` allows and the grant's, by call; undefined when they allow the same. */
function describeDifference(actual: CommandSet, expected: CommandSet, asked: CommandSet): string | undefined {
  if (expected.refused.length > 0) {
    // not named: a rule is the contributions' text, and a hostile one may hold anything
    return `commands: this server refuses ${expected.refused.length} of the grant's command rules (no such command, subcommand or category here)`;
  }
  if (actual.refused.length > 0) {
    return `commands: the backend's rules name ${named(actual.refused)}, which this server's command table lacks`;
  }
  const { extra, lacking } = differences(actual, expected);
  if (extra.length === 0 && lacking.length === 0) return undefined;
  const isWithheld = (call: string) => {
    const [name, arg] = call.split(' ') as [string, string | undefined];
    return permits(asked, name, arg);
  };
  const withheld = extra.filter(isWithheld);
  const beyond = extra.filter((c) => !isWithheld(c));
  const parts = [
    beyond.length > 0 ? `the backend also allows ${named(beyond)}` : '',
    withheld.length > 0 ? `the backend allows ${named(withheld)}, which the deny list withholds` : '',
    lacking.length > 0 ? `the backend lacks ${named(lacking)}` : '',
  ].filter((p) => p !== '');
  return `commands: ${parts.join('; ')}`;
}

/** Key permissions as Redis keeps them: pattern → `R`, `W` or `RW` (`~p` is `%RW~p`). */
function keyPermissions(keys: readonly string[]): Map<string, string> {
  const perms = new Map<string, Set<string>>();
  for (const key of keys) {
    const selector = /^%([RW]+)~(.*)$/i.exec(key);
    const [pattern, letters] = selector ? [selector[2]!, selector[1]!.toUpperCase()] : [key, 'RW'];
    const set = perms.get(pattern) ?? new Set<string>();
    for (const letter of letters) set.add(letter);
    perms.set(pattern, set);
  }
  return new Map([...perms].map(([p, s]) => [p, ['R', 'W'].filter((l) => s.has(l)).join('')]));
}

const spell = (pattern: string, perm: string) => (perm === 'RW' ? `~${pattern}` : `%${perm}~${pattern}`);

function patternDifference(
  noun: string,
  actual: Map<string, string>,
  expected: Map<string, string>,
  sigil: (p: string, perm: string) => string,
): string | undefined {
  // `*` with reads and writes is every name: nothing else can be added beside it
  if (actual.get('*') === 'RW' && expected.get('*') === 'RW') return undefined;
  const beyond = (a: Map<string, string>, b: Map<string, string>) =>
    [...a].flatMap(([p, perm]) => {
      const more = [...perm].filter((l) => !(b.get(p) ?? '').includes(l)).join('');
      return more === '' ? [] : [sigil(p, more)];
    });
  const extra = beyond(actual, expected);
  const lacking = beyond(expected, actual);
  if (extra.length === 0 && lacking.length === 0) return undefined;
  const show = (m: Map<string, string>) =>
    m.size === 0 ? '(none)' : `"${[...m].map(([p, perm]) => sigil(p, perm)).join(' ')}"`;
  const parts = [
    extra.length > 0 ? `also allows ${extra.join(' ')}` : '',
    lacking.length > 0 ? `lacks ${lacking.join(' ')}` : '',
  ].filter((p) => p !== '');
  return `${noun}: the backend ${parts.join(' and ')} (the backend has ${show(actual)}, the grant asks for ${show(expected)})`;
}

/** Why `actual` is not `owner`'s by its mark, or undefined when it is. */
function markDifference(actual: AclUser, owner: string): string | undefined {
  const owners = ownersOf(actual);
  if (ownedBy(owners, owner)) return undefined;
  const others = owners.filter((o) => o !== owner).map((o) => `"${o}"`);
  return others.length > 0
    ? `mark: the ACL user carries the mark of provider ${others.join(', ')}, not "${owner}"'s alone`
    : `mark: the ACL user lacks holdfast's mark for provider "${owner}" ("&${markChannel(owner)}" in a selector); holdfast does not take it for its own`;
}

/** The selectors that allow some call: the mark allows none, and one that allows none grants nothing. */
function selectorDifference(selectors: readonly AclSelector[], table: CommandTable): string | undefined {
  const granting = selectors.filter((s) => !allowsNothing(evaluateText(s.commands, table), table));
  if (granting.length === 0) return undefined;
  const shown = granting.map(
    (s) =>
      `(${[...s.keys.map((k) => (k.startsWith('%') ? k : `~${k}`)), ...s.channels.map((c) => `&${c}`), s.commands].join(' ')})`,
  );
  return `selectors: the backend has ${granting.length} selector(s) that allow calls, "${shown.join(' ')}"; the grant's only selector is holdfast's mark, which allows nothing`;
}

function passwordDifference(actual: AclUser, expected: ExpectedUser): string | undefined {
  const matching = actual.passwords.filter((h) => h === expected.passwordHash).length;
  if (matching === 1 && (actual.passwords.length === 1 || expected.othersAccepted)) return undefined;
  const others = actual.passwords.length - matching;
  return actual.passwords.length === 0
    ? 'the ACL user has no password (nopass or none set)'
    : matching === 0
      ? `the ACL user accepts ${others} password(s), none of them the grant's`
      : `the ACL user accepts the grant's password and ${others} other(s)`;
}

const rwOf = (patterns: readonly string[]) => new Map(effectivePatterns(patterns).map((p) => [p, 'RW']));

/** What a user that does not exist is: nothing to compare (frozen: one answer shared by every missing user). */
export const MISSING_USER: HoldsAnswer = Object.freeze({
  held: false,
  reason: 'missing',
  detail: 'the backend has no such ACL user',
});

/**
 * Compares what the backend has with what was asked, by meaning, on the server's command table.
 * The detail names fields, calls and patterns, never a password or a hash.
 */
export function compareUser(actual: AclUser | null, expected: ExpectedUser, table: CommandTable): HoldsAnswer {
  if (actual === null) return MISSING_USER;
  const unmarked = markDifference(actual, expected.owner);
  if (unmarked !== undefined) return { held: false, reason: 'rules-differ', detail: unmarked };
  if (actual.flags.includes('off') || !actual.flags.includes('on')) {
    return { held: false, reason: 'disabled', detail: 'the ACL user is off' };
  }
  const password = passwordDifference(actual, expected);
  if (password !== undefined) return { held: false, reason: 'password-differs', detail: password };
  const channelSigil = (p: string) => `&${p}`;
  const found = [
    patternDifference('keys', keyPermissions(actual.keys), rwOf(expected.keys), spell),
    patternDifference('channels', rwOf(actual.channels), rwOf(expected.channels), channelSigil),
    commandDifference(
      evaluateText(actual.commands, table),
      evaluateRules(expected.rules, table),
      evaluateRules(expected.asked, table),
    ),
    selectorDifference(actual.selectors, table),
  ].filter((d): d is string => d !== undefined);
  return found.length === 0 ? { held: true } : { held: false, reason: 'rules-differ', detail: found.join('; ') };
}

/** Whether `commands` (an `ACL GETUSER` text) names a command or category `table` does not know: the table is stale. */
export function namesUnknown(commands: string, table: CommandTable): boolean {
  return evaluateText(commands, table).refused.length > 0;
}
