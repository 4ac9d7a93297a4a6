/** `store:`: the MongoDB (or MongoDB wire server) of the records. Each option declared once (see `option.ts`). */
import type { Options } from './option.js';
import { durationSchema } from './duration.js';

export const STORE_OPTIONS = {
  url: {
    schema: (kinds) => kinds.mongoUrl,
    doc: 'a `mongodb://` or `mongodb+srv://` URL, e.g. `mongodb://127.0.0.1:27017/?authSource=admin`; a replica set by its URL',
  },
  username: { schema: (kinds) => kinds.text.optional(), doc: "the store's user" },
  passwordFile: {
    schema: (kinds) => kinds.password.optional(),
    field: 'password',
    doc: 'the file holding its password',
  },
  database: { schema: (kinds) => kinds.text, default: 'holdfast', doc: 'the database of the records' },
  connectTimeout: {
    schema: () => durationSchema,
    default: '5s',
    field: 'connectTimeoutMs',
    doc: 'how long start-up (and `holdfast status`) waits for the store before it gives up, naming it',
  },
} as const satisfies Options;
