/**
 * Imported first by the CLI's entry (`main.ts`), before any other module is loaded, so that V8's
 * heap growth is bounded from the process's start and not only once the engine starts (see
 * `engine/heap-growth.ts`): the modules, the configuration and the first read of the
 * contributions then grow the heap by the same rule.
 */
import { boundHeapGrowth } from '../engine/heap-growth.js';

boundHeapGrowth();
