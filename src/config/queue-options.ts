/** `queue:`: BullMQ's Redis, which also holds holdfast's coordination. Each option declared once (see `option.ts`). */
import { z } from 'zod';
import type { Options } from './option.js';
import { MAX_SHARDS } from './shard-prefixes.js';

export const QUEUE_OPTIONS = {
  url: {
    schema: (kinds) => kinds.redisUrl.optional(),
    doc: 'one Redis, `redis://host:port/db` (`rediss://` for TLS). Required unless `cluster` is given',
  },
  cluster: {
    schema: (kinds) => z.array(kinds.redisUrl).min(1, 'list at least one node of the cluster').optional(),
    doc: 'some nodes of a Redis Cluster (`[redis://10.0.0.1:6379, …]`), instead of `url`; holdfast finds the others. Database 0 only; every node `redis://` or every node `rediss://`; the prefix must then hold a hash tag, e.g. `"{holdfast}"`',
  },
  username: { schema: (kinds) => kinds.text.optional(), doc: 'the Redis user' },
  passwordFile: { schema: (kinds) => kinds.password.optional(), doc: 'the file holding its password' },
  prefix: {
    schema: (kinds) => kinds.text,
    default: 'holdfast',
    doc: 'the prefix of every key holdfast and BullMQ write',
  },
  name: { schema: (kinds) => kinds.text, default: 'consumers', doc: "the BullMQ queue's name" },
  shards: {
    schema: () => z.int().min(1, 'must be at least 1').max(MAX_SHARDS, `must be at most ${MAX_SHARDS}`),
    default: 1,
    doc: `1 to ${MAX_SHARDS}: consumers spread over this many hash tags (\`{holdfast}\` → \`{holdfast-0}\` …), one queue each. Changing it: stop every process first ([topologies](topologies.md#queue-shards))`,
  },
} as const satisfies Options;
