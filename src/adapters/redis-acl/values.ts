/**
 * What a consumer of a `redis-acl` provider asks for: key and channel glob patterns and
 * command rules. Raw ACL tokens (`nopass`, `allkeys`, `>pw`, `#hash`, `reset`…) cannot be
 * expressed: patterns get their `~`/`&` from holdfast, and command rules must look like
 * `+@read`, `-@dangerous`, `+get` or `+config|get`.
 */
import { z } from 'zod';
import { boundedList, boundedString, FORMAT, type ListBound } from '../value-bounds.js';

/** `+@category`, `-@category`, `+command`, `-command`, `+command|subcommand`; lowercase. */
export const COMMAND_RULE = /^[+-](?:@[a-z][a-z0-9_-]*|[a-z][a-z0-9_.-]*(?:\|[a-z][a-z0-9_.-]*)?)$/;

export const DEFAULT_COMMANDS: readonly string[] = ['+@read', '+@write', '+@connection', '-@dangerous'];

/**
 * What one consumer may ask for, at most. Redis checks ACL patterns in time that grows with the
 * square of their number (10,000 patterns took 0.46 s, 20,000 took 1.68 s, blocking the server
 * meanwhile): 256 patterns stay far below a millisecond.
 */
export const REDIS_ACL_BOUNDS = {
  keys: { maxItems: 256, maxBytes: 16 * 1024, noun: 'key patterns' },
  channels: { maxItems: 256, maxBytes: 16 * 1024, noun: 'channel patterns' },
  commands: { maxItems: 64, maxBytes: 4 * 1024, noun: 'command rules' },
  /** One key or channel pattern, in bytes. */
  patternBytes: 512,
  /** One command rule, in bytes. */
  commandBytes: 128,
} as const satisfies Record<'keys' | 'channels' | 'commands', ListBound> & Record<string, unknown>;

const globPattern = boundedString(
  z
    .string()
    .min(1, 'a pattern may not be empty')
    .regex(/^[^\s\p{Cc}]+$/u, 'a pattern may not contain whitespace or control characters')
    .refine((pattern) => !FORMAT.test(pattern), 'a pattern may not contain Unicode format characters (such as U+202E)'),
  REDIS_ACL_BOUNDS.patternBytes,
);

export const commandRule = z
  .string()
  .regex(COMMAND_RULE, 'a command rule looks like "+@read", "-@dangerous", "+get" or "+config|get" (lowercase)');

export const redisAclValuesSchema = z.strictObject({
  keys: boundedList(globPattern, REDIS_ACL_BOUNDS.keys).default([]),
  channels: boundedList(globPattern, REDIS_ACL_BOUNDS.channels).default([]),
  commands: boundedList(boundedString(commandRule, REDIS_ACL_BOUNDS.commandBytes), REDIS_ACL_BOUNDS.commands).default([
    ...DEFAULT_COMMANDS,
  ]),
});

/** A consumer's values on a `redis-acl` provider, defaults applied. */
export type RedisAclValues = z.infer<typeof redisAclValuesSchema>;
