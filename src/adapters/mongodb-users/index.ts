/** The `mongodb-users` adapter kind: MongoDB users, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { mongodbUsersPolicySchema, violations, type MongodbUsersPolicy } from './policy.js';
import { MongodbUsersAdapter } from './mongodb-users-adapter.js';
import { mongodbUsersValuesSchema, type MongodbUsersValues } from './values.js';

export type { MongodbUsersPolicy } from './policy.js';
export type { MongodbUsersValues } from './values.js';
export { MongodbUsersAdapter } from './mongodb-users-adapter.js';

export const mongodbUsers: AdapterKind<MongodbUsersValues, MongodbUsersPolicy> = {
  kind: 'mongodb-users',
  valuesSchema: mongodbUsersValuesSchema,
  policySchema: mongodbUsersPolicySchema,
  violations,
  // `usersInfo` with credentials: 152 ms on FerretDB at 1,000 users (far less on mongod; raise the budget there)
  deepCheckCostUs: 150_000,
  connect: (admin, ownership) => new MongodbUsersAdapter(admin, ownership),
};
