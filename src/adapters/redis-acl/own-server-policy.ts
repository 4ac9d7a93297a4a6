/**
 * A `redis-acl` provider on holdfast's own Redis (`sharesHoldfastServer`): its consumers' key and
 * channel patterns never reach holdfast's names (`src/policy/own-names.ts`), and this deny list
 * is added to the provider's own, whatever it says, for what no pattern governs. `SCAN`,
 * `RANDOMKEY` and, on a Cluster, `CLUSTER GETKEYSINSLOT` name any key, and `DBSIZE` and
 * `CLUSTER COUNTKEYSINSLOT` count them (Redis's ACL does not filter names: these take no key);
 * the rest is the default deny list (`policy.ts`), which an operator could have shortened:
 * erasing or listing every key, pausing or killing holdfast's connections, the pub/sub and
 * tracking introspection that names keys.
 */
import { DEFAULT_DENIED_COMMANDS, type RedisAclPolicy } from './policy.js';

export const OWN_SERVER_DENIED_COMMANDS: readonly string[] = [
  ...DEFAULT_DENIED_COMMANDS,
  '-scan',
  '-randomkey',
  '-dbsize',
  '-cluster|getkeysinslot',
  '-cluster|countkeysinslot',
];

/** `policy` with {@link OWN_SERVER_DENIED_COMMANDS} appended to its deny list (each once). */
export function ownServerPolicy(policy: RedisAclPolicy): RedisAclPolicy {
  const denied = [...policy.deniedCommands];
  for (const rule of OWN_SERVER_DENIED_COMMANDS) if (!denied.includes(rule)) denied.push(rule);
  return { ...policy, deniedCommands: denied };
}
