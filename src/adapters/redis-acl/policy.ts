/**
 * What a `redis-acl` provider lets its consumers ask for, and the pure check of a consumer
 * against it. Prefixes may use the templates `{id}` and `{login}`.
 */
import { z } from 'zod';
import type { PolicySubject } from '../adapter.js';
import { separatorProblems, templateProblem } from '../name-templates.js';
import { SCRATCH_PREFIX } from './ownership.js';
import { commandRule, type RedisAclValues } from './values.js';

const GLOB_CHARS = /[*?[\]\\]/;

const prefix = z
  .string()
  .min(1, 'a prefix may not be empty; set allowAllKeys or allowAllChannels instead')
  .regex(/^[^\s\p{Cc}]+$/u, 'a prefix may not contain whitespace or control characters')
  .refine((p) => !GLOB_CHARS.test(p), 'a prefix is literal: it may not contain *, ?, [, ] or \\')
  .superRefine((p, ctx) => {
    const problem = templateProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const allowedRule = commandRule
  .refine((rule) => rule.startsWith('+'), 'allowed commands are "+" rules')
  .refine((rule) => rule !== '+@all', 'use allowAllCommands to allow "+@all"');

const deniedRule = commandRule.refine(
  (rule) => rule.startsWith('-'),
  'denied commands are "-" rules, such as "-@dangerous" or "-flushall"',
);

/**
 * What a tenant may use without the operator saying so: reads and writes within its patterns,
 * its connection, and pub/sub within its channels. Not `@keyspace` (`FLUSHALL`, `FLUSHDB`,
 * `SWAPDB`, `KEYS`…), `@admin`, `@dangerous` or `@scripting`.
 */
export const DEFAULT_ALLOWED_COMMANDS: readonly string[] = ['+@read', '+@write', '+@connection', '+@pubsub'];

/**
 * Applied after every consumer's rules, so they win over anything it asks. `@dangerous` and
 * `@admin` hold `FLUSHALL`, `FLUSHDB`, `SWAPDB`, `KEYS`, `CLIENT LIST|KILL`, `CONFIG`, `DEBUG`,
 * `MONITOR`; `FUNCTION` is in neither, yet `FUNCTION FLUSH|DELETE|LOAD` (in `@write`) erase or
 * replace every tenant's function libraries.
 *
 * Redis's ACL judges a command and its subcommand, never its arguments, and two in `@pubsub`
 * and `@connection` cross tenants whatever their arguments: `PUBSUB CHANNELS|NUMSUB|NUMPAT|
 * SHARDCHANNELS|SHARDNUMSUB` list every tenant's channels and count their subscribers
 * (channel permissions are not asked), and `CLIENT TRACKING ON BCAST` with no `PREFIX`, or
 * another tenant's (Redis 7.0 does not check a prefix against the key patterns), streams the
 * name of every key anyone changes. So `PUBSUB` is denied whole, and `CLIENT TRACKING` in
 * every mode: a tenant keeps `PUBLISH`/`SUBSCRIBE` on its own channels and loses the
 * introspection of pub/sub and client-side caching.
 */
export const DEFAULT_DENIED_COMMANDS: readonly string[] = [
  '-@dangerous',
  '-@admin',
  '-function',
  '-pubsub',
  '-client|tracking',
];

export const redisAclPolicySchema = z.strictObject({
  keyPrefix: prefix.default('{id}:'),
  channelPrefix: prefix.default('{id}:'),
  allowAllKeys: z.boolean().default(false),
  allowAllChannels: z.boolean().default(false),
  allowedCommands: z.array(allowedRule).default([...DEFAULT_ALLOWED_COMMANDS]),
  allowAllCommands: z.boolean().default(false),
  /** Command rules appended after every consumer's: the last rule wins in Redis, so these always do. */
  deniedCommands: z.array(deniedRule).default([...DEFAULT_DENIED_COMMANDS]),
});

/** A `redis-acl` provider's policy, defaults applied. */
export type RedisAclPolicy = z.infer<typeof redisAclPolicySchema>;

/**
 * What `subject` asks for beyond `policy`, one sentence per problem naming the field;
 * empty when allowed.
 */
export function violations(subject: PolicySubject<RedisAclValues>, policy: RedisAclPolicy): string[] {
  const expand = (template: string) => template.replaceAll('{id}', subject.id).replaceAll('{login}', subject.login);
  const problems: string[] = [];

  if (subject.login.startsWith(SCRATCH_PREFIX)) {
    problems.push(`login: "${subject.login}" starts with "${SCRATCH_PREFIX}", which holdfast reserves for its own use`);
  }

  const patterns = (field: 'keys' | 'channels', noun: string, template: string, allowAll: boolean) => {
    if (allowAll) return;
    problems.push(...separatorProblems(field === 'keys' ? 'keyPrefix' : 'channelPrefix', template, subject));
    if (subject.values[field].length === 0) return;
    const literal = expand(template);
    if (GLOB_CHARS.test(literal)) {
      problems.push(
        `values.${field}: the ${noun} prefix "${template}" expands to "${literal}", which is a pattern, not a prefix`,
      );
      return;
    }
    subject.values[field].forEach((pattern, i) => {
      if (!pattern.startsWith(literal)) {
        problems.push(
          `values.${field}[${i}]: "${pattern}" is outside the ${noun} prefix "${literal}" allowed by the provider's policy`,
        );
      }
    });
  };
  patterns('keys', 'key', policy.keyPrefix, policy.allowAllKeys);
  patterns('channels', 'channel', policy.channelPrefix, policy.allowAllChannels);

  if (!policy.allowAllCommands) {
    const allowed = new Set(policy.allowedCommands);
    subject.values.commands.forEach((rule, i) => {
      if (!rule.startsWith('+') || allowed.has(rule) || allowed.has(rule.split('|')[0] ?? rule)) return;
      problems.push(
        `values.commands[${i}]: "${rule}" is not among the commands allowed by the provider's policy (${policy.allowedCommands.join(' ')})`,
      );
    });
  }
  return problems;
}
