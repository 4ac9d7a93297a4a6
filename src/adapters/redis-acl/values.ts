/**
 * What a consumer of a `redis-acl` provider asks for: key and channel glob patterns and
 * command rules. Raw ACL tokens (`nopass`, `allkeys`, `>pw`, `#hash`, `reset`…) cannot be
 * expressed: patterns get their `~`/`&` from holdfast, and command rules must look like
 * `+@read`, `-@dangerous`, `+get` or `+config|get`.
 */
import { z } from 'zod';

/** `+@category`, `-@category`, `+command`, `-command`, `+command|subcommand`; lowercase. */
export const COMMAND_RULE = /^[+-](?:@[a-z][a-z0-9_-]*|[a-z][a-z0-9_.-]*(?:\|[a-z][a-z0-9_.-]*)?)$/;

export const DEFAULT_COMMANDS: readonly string[] = ['+@read', '+@write', '+@connection', '-@dangerous'];

const globPattern = z
  .string()
  .min(1, 'a pattern may not be empty')
  .regex(/^[^\s\p{Cc}]+$/u, 'a pattern may not contain whitespace or control characters');

const globPatterns = z.array(globPattern);

export const commandRule = z
  .string()
  .regex(COMMAND_RULE, 'a command rule looks like "+@read", "-@dangerous", "+get" or "+config|get" (lowercase)');

export const redisAclValuesSchema = z.strictObject({
  keys: globPatterns.default([]),
  channels: globPatterns.default([]),
  commands: z.array(commandRule).default([...DEFAULT_COMMANDS]),
});

/** A consumer's values on a `redis-acl` provider, defaults applied. */
export type RedisAclValues = z.infer<typeof redisAclValuesSchema>;
