/**
 * Every option of the configuration file, by the section it is in: the tables that declare them
 * (see `option.ts`), from which `configSchema` builds the schema and `option-rows.ts` renders
 * docs/configuration.md's rows. The timing settings are declared in `timing.ts`, each adapter's
 * policy by the adapter.
 */
import { HTTP_OPTIONS } from './http-options.js';
import type { Options } from './option.js';
import { LOG_OPTIONS, SYNC_OPTIONS, TOP_OPTIONS, WORKER_OPTIONS } from './process-options.js';
import { PROVIDER_OPTIONS } from './provider-options.js';
import { QUEUE_OPTIONS } from './queue-options.js';
import { STORE_OPTIONS } from './store-options.js';

/** Each section's key path in the file (`''`: the top level; `providers[]`: each provider), and its options. */
export const CONFIG_SECTIONS: ReadonlyArray<readonly [string, Options]> = [
  ['queue', QUEUE_OPTIONS],
  ['store', STORE_OPTIONS],
  ['', TOP_OPTIONS],
  ['worker', WORKER_OPTIONS],
  ['sync', SYNC_OPTIONS],
  ['log', LOG_OPTIONS],
  ['http', HTTP_OPTIONS],
  ['providers[]', PROVIDER_OPTIONS],
];
