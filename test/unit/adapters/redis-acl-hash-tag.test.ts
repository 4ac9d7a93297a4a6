/**
 * A Redis Cluster hash tag in a key prefix: `{id}` and `{login}` are the templates; any other
 * brace is literal, so `{{id}}:` is the prefix `{app_3}:` (every key of the consumer in one
 * slot), and a consumer's `{app_3}:*` is within it.
 */
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';

const policy = (keyPrefix: string) => redisAcl.policySchema.parse({ keyPrefix });
const subject = (keys: string[]) => ({ id: 'app_3', login: 'app_3', values: redisAcl.valuesSchema.parse({ keys }) });

describe('a hash tag in a redis-acl key prefix', () => {
  it('writes {{id}}: for the literal prefix {app_3}: and holds keys to it', () => {
    expect(redisAcl.violations(subject(['{app_3}:*']), policy('{{id}}:'))).toEqual([]);
    expect(redisAcl.violations(subject(['app_3:*']), policy('{{id}}:'))).toEqual([
      'values.keys[0]: "app_3:*" is outside the key prefix "{app_3}:" allowed by the provider\'s policy',
    ]);
    expect(redisAcl.violations(subject(['{app_4}:*']), policy('{{id}}:'))).toHaveLength(1);
  });
});
