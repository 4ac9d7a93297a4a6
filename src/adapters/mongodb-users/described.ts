/** The `mongodb-users` adapter kind as configuration reads it: no driver loaded (see `index.ts` for `connect`). */
import type { AdapterDescription } from '../adapter.js';
import { mongodbUsersPolicySchema, violations, type MongodbUsersPolicy } from './policy.js';
import { mongodbUsersValuesSchema, type MongodbUsersValues } from './values.js';

export const mongodbUsersDescribed: AdapterDescription<MongodbUsersValues, MongodbUsersPolicy> = {
  kind: 'mongodb-users',
  valuesSchema: mongodbUsersValuesSchema,
  policySchema: mongodbUsersPolicySchema,
  violations,
  // `usersInfo` with credentials: 152 ms on FerretDB at 1,000 users (far less on mongod; raise the budget there)
  deepCheckCostUs: 150_000,
  // on holdfast's own server (src/config/own-servers.ts): the store's database is never a consumer's
  addressed: (values) => ({ databases: [values.database] }),
};
