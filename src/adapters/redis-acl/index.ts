/** The `redis-acl` adapter kind: Redis ACL users, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { sha256Hex } from '../../secrets/sha256.js';
import { redisAclPolicySchema, violations, type RedisAclPolicy } from './policy.js';
import { RedisNodesAdapter } from './redis-nodes-adapter.js';
import { redisAclValuesSchema, type RedisAclValues } from './values.js';

export type { RedisAclPolicy } from './policy.js';
export type { RedisAclValues } from './values.js';
export { RedisAclAdapter, type RedisAclAdapterOptions } from './redis-acl-adapter.js';
export { RedisNodesAdapter, CLUSTER_CLIENT_COMMANDS, AUTH_IN_FLIGHT } from './redis-nodes-adapter.js';

export const redisAcl: AdapterKind<RedisAclValues, RedisAclPolicy> = {
  kind: 'redis-acl',
  valuesSchema: redisAclValuesSchema,
  policySchema: redisAclPolicySchema,
  violations,
  // Redis is sent a password's SHA-256 (`ACL SETUSER … #<sha256>`) and shows it in `ACL GETUSER`
  secretForms: (password) => [sha256Hex(password)],
  // a connection that names no user is Redis's `default` user
  defaultAdminLogin: 'default',
  // `ACL GETUSER` describes the command rules: 0.5–1.6 ms of Redis 7.0's CPU with category rules and the deny list (`INFO commandstats`)
  deepCheckCostUs: 1_000,
  namespaces: (policy) => [
    { noun: 'keys', field: 'keyPrefix', template: policy.allowAllKeys ? undefined : policy.keyPrefix, allField: 'allowAllKeys' },
    { noun: 'channels', field: 'channelPrefix', template: policy.allowAllChannels ? undefined : policy.channelPrefix, allField: 'allowAllChannels' },
  ],
  // a primary and its replicas, Sentinel, a Cluster: each login on every node (redis-nodes-adapter.ts)
  nodeForms: true,
  // every node of the backend: the admin URL's node and its replicas unless the topology says otherwise
  connect: (admin, ownership, policy) =>
    new RedisNodesAdapter(admin, admin.topology ?? { form: 'url', nodes: 'discover' }, ownership, {
      node: { deniedCommands: policy?.deniedCommands },
      ...(admin.pace
        ? {
            rediscoverEveryMs: Math.min(5_000, admin.pace.verifyEveryMs),
            nodeTimeoutMs: Math.min(5_000, Math.max(200, Math.floor(admin.pace.checkTimeoutMs / 3))),
            // a node's missing consumer is confirmed at each of its checks (retries never wait beyond verifyEvery)
            missingTtlMs: Math.max(60_000, 3 * admin.pace.verifyEveryMs + 2 * admin.pace.checkTimeoutMs),
          }
        : {}),
    }),
};
