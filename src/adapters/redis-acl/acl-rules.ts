/**
 * ACL rules on the wire and back: the `ACL SETUSER` arguments for a grant (only the
 * password's SHA-256 is sent) and the reading of an `ACL GETUSER` reply. What they mean is
 * compared in `acl-compare.ts`.
 */
import { markSelector } from './acl-mark.js';

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
