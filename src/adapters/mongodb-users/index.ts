/** The `mongodb-users` adapter kind: MongoDB users, one per consumer. */
import type { AdapterKind } from '../adapter.js';
import { mongodbUsersDescribed } from './described.js';
import { MongodbUsersAdapter } from './mongodb-users-adapter.js';
import type { MongodbUsersPolicy } from './policy.js';
import type { MongodbUsersValues } from './values.js';

export type { MongodbUsersPolicy } from './policy.js';
export type { MongodbUsersValues } from './values.js';
export { MongodbUsersAdapter } from './mongodb-users-adapter.js';

export const mongodbUsers: AdapterKind<MongodbUsersValues, MongodbUsersPolicy> = {
  ...mongodbUsersDescribed,
  connect: (admin, ownership) => new MongodbUsersAdapter(admin, ownership),
};
