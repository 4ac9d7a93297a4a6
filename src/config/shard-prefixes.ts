/**
 * The key prefix of each queue shard (see `queue/shard-of.ts`). Every key of a shard (its BullMQ
 * queue's and holdfast's own, `coordination/keys.ts`) starts with its prefix, and on a Redis
 * Cluster a prefix's hash tag decides the slot, so the master, of all of them:
 *
 * - one shard (`queue.shards: 1`, the default): the prefix as configured, unchanged (the keys
 *   stored before shards existed are the same keys);
 * - N shards, a prefix with a hash tag (Redis's rule: the text between the first `{` and the
 *   first `}` after it, not empty): `-<i>` is added inside the tag, `{holdfast}` →
 *   `{holdfast-0}` … `{holdfast-N-1}`, `app:{hf}:x` → `app:{hf-0}:x`;
 * - N shards, a prefix without any brace: the whole prefix becomes the tag, `holdfast` →
 *   `{holdfast-0}` … ;
 * - N shards, a prefix with a brace but no hash tag (`a{}b`, `hold}fast`): refused, as no tag can
 *   be derived that Redis would read as one (see {@link shardPrefixProblem}).
 */
import { HoldfastError } from '../errors/holdfast-error.js';

/**
 * The most shards a queue may have: more would spread a small fleet thin, and each costs every worker a BullMQ worker.
 */
export const MAX_SHARDS = 64;

/** Where `prefix`'s hash tag is, by Redis's rule: the indices of its braces; undefined when it has none. */
function hashTagOf(prefix: string): { open: number; close: number } | undefined {
  const open = prefix.indexOf('{');
  if (open < 0) return undefined;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1 ? { open, close } : undefined;
}

/** Why `prefix` cannot be split into `shards` shards, or undefined when it can. */
export function shardPrefixProblem(prefix: string, shards: number): string | undefined {
  if (shards <= 1 || hashTagOf(prefix) || !/[{}]/.test(prefix)) return undefined;
  return `has a brace but no hash tag ({…} with text inside), so no hash tag can be derived for each of the ${shards} shards; use e.g. "{holdfast}"`;
}

/** The prefix of each of `shards` shards of the queue whose prefix is `prefix` (see the file's comment). */
export function shardPrefixes(prefix: string, shards: number): string[] {
  if (shards <= 1) return [prefix];
  const problem = shardPrefixProblem(prefix, shards);
  if (problem) throw new HoldfastError('CONFIG_INVALID', `queue prefix ${JSON.stringify(prefix)} ${problem}`);
  const tag = hashTagOf(prefix);
  return Array.from({ length: shards }, (_, i) =>
    tag ? `${prefix.slice(0, tag.close)}-${i}${prefix.slice(tag.close)}` : `{${prefix}-${i}}`,
  );
}
