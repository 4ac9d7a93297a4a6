/** The `redis-acl` adapter kind as configuration reads it: no driver loaded (see `index.ts` for `connect`). */
import type { AdapterDescription } from '../adapter.js';
import { sha256Hex } from '../../secrets/sha256.js';
import { ownServerPolicy } from './own-server-policy.js';
import { redisAclPolicySchema, violations, type RedisAclPolicy } from './policy.js';
import { redisAclValuesSchema, type RedisAclValues } from './values.js';

export const redisAclDescribed: AdapterDescription<RedisAclValues, RedisAclPolicy> = {
  kind: 'redis-acl',
  valuesSchema: redisAclValuesSchema,
  policySchema: redisAclPolicySchema,
  violations,
  // Redis is sent a password's SHA-256 (`ACL SETUSER … #<sha256>`) and shows it in `ACL GETUSER`
  secretForms: (password) => [sha256Hex(password)],
  // a connection that names no user is Redis's `default` user
  defaultAdminLogin: 'default',
  // `ACL GETUSER` describes the command rules: 0.5–1.6 ms of Redis 7.0's CPU with category rules and the deny list
  // (`INFO commandstats`)
  deepCheckCostUs: 1_000,
  namespaces: (policy) => [
    {
      noun: 'keys',
      field: 'keyPrefix',
      template: policy.allowAllKeys ? undefined : policy.keyPrefix,
      allField: 'allowAllKeys',
    },
    {
      noun: 'channels',
      field: 'channelPrefix',
      template: policy.allowAllChannels ? undefined : policy.channelPrefix,
      allField: 'allowAllChannels',
    },
  ],
  // a primary and its replicas, Sentinel, a Cluster: each login on every node (redis-nodes-adapter.ts)
  nodeForms: true,
  // on holdfast's own server (src/config/own-servers.ts): the patterns judged, names listed by no key denied
  addressed: (values) => ({ keys: values.keys, channels: values.channels }),
  ownServerPolicy,
};
