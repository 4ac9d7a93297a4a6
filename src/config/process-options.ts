/**
 * The process's own options: its fingerprint key, `worker:`, `sync:` and `log:`. Each option
 * declared once (see `option.ts`).
 */
import { z } from 'zod';
import type { Options } from './option.js';
import { durationSchema } from './duration.js';
import { maxConsumersSchema, DEFAULT_MAX_CONSUMERS } from './max-consumers.js';
import { sizeSchema } from '../text/size.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export const LOG_FORMATS = ['json', 'pretty'] as const;

/** The options at the file's top level besides its sections. */
export const TOP_OPTIONS = {
  fingerprintKeyFile: {
    schema: (kinds) => kinds.filePath,
    default: '.holdfast/fingerprint.key',
    doc: "the HMAC key for fingerprints of applied secrets and specs, and for the seals on jobs; created when missing (32 random bytes, mode 0600). Every worker must read the same key. Relative to this file: keep it across upgrades; under another key each consumer's next check is a deep one (held: its fingerprint made again, nothing applied) and queued tickets are not used",
  },
} as const satisfies Options;

export const WORKER_OPTIONS = {
  concurrency: {
    schema: () => z.int().positive(),
    default: 32,
    doc: "jobs one process runs at once (split over the queue's shards)",
  },
} as const satisfies Options;

export const SYNC_OPTIONS = {
  pollEvery: {
    schema: () => durationSchema,
    default: '5s',
    field: 'pollEveryMs',
    doc: 'how often the contributions files are looked at for changes',
  },
  sentinelEvery: {
    schema: () => durationSchema,
    default: '5s',
    field: 'sentinelEveryMs',
    doc: "how often the queue's sentinel is looked at: a queue that forgot everything is rebuilt at once, and a pause or rate limit set from outside is undone",
    formerly: 'resyncEvery',
  },
  sweepEvery: {
    schema: () => durationSchema,
    default: '30m',
    field: 'sweepEveryMs',
    doc: 'how often every record is read and any wait the queue lost re-created (also removes what the last good files no longer declare)',
  },
  contributionsMaxBytes: {
    schema: () => sizeSchema,
    default: '64MiB',
    doc: 'a larger contributions file is refused unread (`KiB`, `MiB`, `GiB`, or bytes)',
  },
  /** Resolved per provider (`ProviderConfig.maxConsumers`), not under `sync`. */
  maxConsumers: {
    schema: () => maxConsumersSchema,
    default: DEFAULT_MAX_CONSUMERS,
    doc: "a contributions file declaring more consumers is refused whole, by its count, before its entries are read (1 to 10,000,000); a provider's own `maxConsumers` wins",
  },
} as const satisfies Options;

export const LOG_OPTIONS = {
  level: {
    schema: () => z.enum(LOG_LEVELS),
    default: 'info',
    doc: '`trace`, `debug`, `info`, `warn`, `error` or `fatal`; `HOLDFAST_LOG_LEVEL` wins',
  },
  format: {
    schema: () => z.enum(LOG_FORMATS).optional(),
    shown: '`pretty` on a terminal, else `json`',
    doc: '`json` or `pretty`; `HOLDFAST_LOG_FORMAT` wins',
  },
} as const satisfies Options;
