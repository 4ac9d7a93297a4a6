/** The `redis-acl` adapter kind: Redis ACL users, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { redisAclDescribed } from './described.js';
import type { RedisAclPolicy } from './policy.js';
import { RedisNodesAdapter } from './redis-nodes-adapter.js';
import type { RedisAclValues } from './values.js';

export type { RedisAclPolicy } from './policy.js';
export type { RedisAclValues } from './values.js';
export { RedisAclAdapter, type RedisAclAdapterOptions } from './redis-acl-adapter.js';
export { RedisNodesAdapter, CLUSTER_CLIENT_COMMANDS, AUTH_IN_FLIGHT } from './redis-nodes-adapter.js';

export const redisAcl: AdapterKind<RedisAclValues, RedisAclPolicy> = {
  ...redisAclDescribed,
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
