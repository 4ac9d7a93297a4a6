/**
 * ACL rules on the wire and back: the `ACL SETUSER` arguments for a grant (only the
 * password's SHA-256 is sent), the reading of an `ACL GETUSER` reply, and the comparison of
 * the two. Redis rewrites command rules into a canonical, version-dependent form, so the
 * expected commands are what the same server made of the same rules for a scratch user.
 */
import { sha256Hex } from '../../secrets/sha256.js';
import type { HoldsAnswer } from '../adapter.js';
import { ownedBy } from '../claim-login.js';
import { markChannel, markSelector, ownersOf, SCRATCH_PREFIX } from './ownership.js';

export { SCRATCH_PREFIX } from './ownership.js';

/**
 * The patterns as Redis keeps them: `*` covers every name (and Redis refuses a pattern after
 * it), duplicates are kept once.
 */
export function effectivePatterns(patterns: readonly string[]): string[] {
  return patterns.includes('*') ? ['*'] : [...new Set(patterns)];
}

/**
 * The command rules a user gets: the consumer's, then the provider's deny list, which wins (in Redis the last rule
 * does).
 */
export function effectiveCommands(commands: readonly string[], denied: readonly string[]): string[] {
  return [...commands, ...denied];
}

/** A whole ACL user as holdfast applies it. */
export interface UserSpec {
  passwordHash: string;
  /** During a rotation's overlap: the hashes the user accepts now, kept beside the new one. */
  keptHashes?: readonly string[];
  keys: readonly string[];
  channels: readonly string[];
  /** The command rules, the deny list included ({@link effectiveCommands}). */
  commands: readonly string[];
  /** The provider whose mark the user carries. */
  owner: string;
}

/** Arguments after `ACL SETUSER <login>`: the whole user, from nothing, enabled and marked as `owner`'s. */
export function userRules(user: UserSpec): string[] {
  const kept = [...new Set(user.keptHashes ?? [])].filter((h) => h !== user.passwordHash);
  return [
    'reset',
    'resetchannels', // `reset` means `allchannels` where acl-pubsub-default says so
    'on',
    `#${user.passwordHash}`,
    ...kept.map((h) => `#${h}`),
    ...effectivePatterns(user.keys).map((k) => `~${k}`),
    ...effectivePatterns(user.channels).map((c) => `&${c}`),
    ...user.commands,
    markSelector(user.owner),
  ];
}

/** A stable key for a list of command rules, and the scratch login that probes it. */
export function commandRulesKey(commands: readonly string[]): { key: string; scratch: string } {
  const key = sha256Hex(JSON.stringify(commands));
  return { key, scratch: `${SCRATCH_PREFIX}${key.slice(0, 8)}` };
}

/** Arguments after `ACL SETUSER <scratch>`: the command rules on a disabled user without password. */
export function scratchRules(commands: readonly string[]): string[] {
  return ['reset', 'off', ...commands];
}

/** A selector (`(…)` rule group) as `ACL GETUSER` shows it. */
export interface AclSelector {
  commands: string;
  keys: string[];
  channels: string[];
}

/** The parts of an `ACL GETUSER` reply holdfast compares. */
export interface AclUser {
  flags: string[];
  passwords: string[];
  commands: string;
  /** Key patterns without their `~`, as Redis lists them (read/write selectors keep their `%R~`). */
  keys: string[];
  /** Channel patterns without their `&`. */
  channels: string[];
  /** The user's selectors (`(…)` rule groups); holdfast's mark is one. */
  selectors: AclSelector[];
}

function words(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((w) => w !== '');
  if (Array.isArray(value)) return value.flatMap(words);
  return [];
}

/** A RESP2 field/value list as a map. */
function fields(reply: unknown[]): Map<string, unknown> {
  const field = new Map<string, unknown>();
  for (let i = 0; i + 1 < reply.length; i += 2) field.set(String(reply[i]), reply[i + 1]);
  return field;
}

const strip = (prefix: string) => (w: string) => (w.startsWith(prefix) ? w.slice(prefix.length) : w);

function parseRules(field: Map<string, unknown>): AclSelector {
  return {
    commands: words(field.get('commands')).join(' '),
    keys: words(field.get('keys')).map(strip('~')),
    channels: words(field.get('channels')).map(strip('&')),
  };
}

/** Reads an `ACL GETUSER` reply (RESP2 field/value list); null when the user does not exist. */
export function parseGetUser(reply: unknown): AclUser | null {
  if (reply === null) return null;
  if (!Array.isArray(reply)) throw new TypeError('ACL GETUSER answered with something that is not a list');
  const field = fields(reply);
  const selectors = field.get('selectors');
  return {
    flags: words(field.get('flags')),
    passwords: words(field.get('passwords')),
    ...parseRules(field),
    selectors: Array.isArray(selectors) ? selectors.map((s) => parseRules(fields(Array.isArray(s) ? s : []))) : [],
  };
}

/** What a grant should look like in `ACL GETUSER`. */
export interface ExpectedUser {
  passwordHash: string;
  /** During a rotation's overlap: other passwords beside the grant's are accepted. */
  othersAccepted?: boolean;
  keys: readonly string[];
  channels: readonly string[];
  /** The grant's command rules as applied: the consumer's, then the deny list. */
  rules: readonly string[];
  /** The canonical form of {@link rules} on this server. */
  commands: string;
  /** The provider whose mark the user must carry. */
  owner: string;
}

/** Names the canonical rules one side has and the other lacks, then both sides in full. */
function describeCommands(actual: string, expected: ExpectedUser): string {
  const have = actual.split(' ');
  const want = expected.commands.split(' ');
  const extra = have.filter((r) => !want.includes(r));
  const lacking = want.filter((r) => !have.includes(r));
  const summary = [
    extra.length > 0 ? `the backend also has ${extra.join(' ')}` : '',
    lacking.length > 0 ? `the backend lacks ${lacking.join(' ')}` : '',
  ].filter((part) => part !== '');
  return (
    `commands: ${summary.length > 0 ? summary.join(' and ') : 'the same rules in another order'}` +
    ` (the backend has "${actual}"; the grant's "${expected.rules.join(' ')}" reads "${expected.commands}" on this server)`
  );
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
}

const show = (patterns: readonly string[], sigil: string) =>
  patterns.length === 0 ? '(none)' : `"${patterns.map((p) => `${sigil}${p}`).join(' ')}"`;

/** A selector that is `owner`'s mark and grants nothing: that one channel, no key, no command allowed. */
function isMark(selector: AclSelector, owner: string): boolean {
  const [channel, ...more] = selector.channels;
  return (
    channel === markChannel(owner) &&
    more.length === 0 &&
    selector.keys.length === 0 &&
    selector.commands.split(' ').every((w) => w.startsWith('-'))
  );
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

/** What differs when the selectors are not the mark alone, or undefined. */
function selectorDifference(selectors: readonly AclSelector[], owner: string): string | undefined {
  const [only, ...more] = selectors;
  if (only !== undefined && more.length === 0 && isMark(only, owner)) return undefined;
  const shown = selectors.map(
    (s) => `(${[...s.keys.map((k) => `~${k}`), ...s.channels.map((c) => `&${c}`), s.commands].join(' ')})`,
  );
  return `selectors: the backend has ${selectors.length} selector(s) "${shown.join(' ')}", the grant asks for holdfast's mark alone "(&${markChannel(owner)} -@all)"`;
}

/**
 * Compares what the backend has with what was asked. The detail names fields and rules,
 * never a password or a hash.
 */
export function compareUser(actual: AclUser | null, expected: ExpectedUser): HoldsAnswer {
  if (actual === null) return { held: false, reason: 'missing', detail: 'the backend has no such ACL user' };
  const unmarked = markDifference(actual, expected.owner);
  if (unmarked !== undefined) return { held: false, reason: 'rules-differ', detail: unmarked };
  if (actual.flags.includes('off') || !actual.flags.includes('on')) {
    return { held: false, reason: 'disabled', detail: 'the ACL user is off' };
  }
  const matching = actual.passwords.filter((h) => h === expected.passwordHash).length;
  if (matching !== 1 || (actual.passwords.length !== 1 && !expected.othersAccepted)) {
    const others = actual.passwords.length - matching;
    const detail =
      actual.passwords.length === 0
        ? 'the ACL user has no password (nopass or none set)'
        : matching === 0
          ? `the ACL user accepts ${others} password(s), none of them the grant's`
          : `the ACL user accepts the grant's password and ${others} other(s)`;
    return { held: false, reason: 'password-differs', detail };
  }
  const differences: string[] = [];
  const keys = effectivePatterns(expected.keys);
  if (!sameSet(actual.keys, keys)) {
    differences.push(`keys: the backend has ${show(actual.keys, '~')}, the grant asks for ${show(keys, '~')}`);
  }
  const channels = effectivePatterns(expected.channels);
  if (!sameSet(actual.channels, channels)) {
    differences.push(
      `channels: the backend has ${show(actual.channels, '&')}, the grant asks for ${show(channels, '&')}`,
    );
  }
  if (actual.commands !== expected.commands) differences.push(describeCommands(actual.commands, expected));
  const selectors = selectorDifference(actual.selectors, expected.owner);
  if (selectors !== undefined) differences.push(selectors);
  return differences.length === 0
    ? { held: true }
    : { held: false, reason: 'rules-differ', detail: differences.join('; ') };
}
