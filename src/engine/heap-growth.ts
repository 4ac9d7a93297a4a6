/**
 * How far V8 lets a holdfast process's heap grow past what it keeps.
 *
 * - **The old generation** grows 30% past what its last full GC kept before it runs the next.
 *   V8's own choice goes up to four times, and a busy engine promotes much short-lived garbage
 *   (a start-up's contributions parse, every job's data), so its RSS sat at three to four times
 *   what it keeps: 594 MB at the peak of a 100k-consumer start-up whose heap kept under 100 MB.
 * - **The young generation** stays at the size V8 starts it with (a 1 MB semi-space) instead of
 *   doubling up to 16 MB semi-spaces whenever much of it survives, as it does throughout a
 *   start-up's parse: that was 32 MB of RSS held for the life of the process.
 *
 * Measured by `test/bench/cold-start.ts`. V8 reads both flags when it next collects, so they take
 * effect when set at run time (`--max-semi-space-size` would not: V8 sizes the young generation's
 * bound once, as it starts). A process started with its own value of either kind (on its command
 * line or in `NODE_OPTIONS`) keeps it.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeOptions as startedWith } from '../config/environment.js';

export const HEAP_GROWING_PERCENT = 30;

/** The flags V8 is given, unless the process was started with one of their kind. */
const BOUNDS: ReadonlyArray<{ given: RegExp; flag: string }> = [
  { given: /--heap[-_]growing[-_]percent\b/, flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
  { given: /--(?:min|max)[-_]semi[-_]space[-_]size\b|--semi[-_]space[-_]growth[-_]factor\b/, flag: '--semi-space-growth-factor=1' },
];

export function boundHeapGrowth(argv: readonly string[] = process.execArgv, nodeOptions: string = startedWith()): void {
  const started = [...argv, nodeOptions].join(' ');
  for (const { given, flag } of BOUNDS) if (!given.test(started)) setFlagsFromString(flag);
}
