/**
 * How far V8 lets the old generation grow past what its last full GC kept before it runs the
 * next: 30% in a holdfast process. V8's own choice goes up to four times, and a busy engine
 * promotes much short-lived garbage (a start-up's contributions parse, every job's data), so
 * its RSS sat at three to four times what it keeps: 594 MB at the peak of a 100k-consumer
 * start-up whose heap kept under 100 MB. Measured by `test/bench/cold-start.ts`.
 *
 * V8 reads this at every full GC, so it takes effect when set at run time. A process started
 * with its own `--heap-growing-percent` keeps it.
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 30;

export function boundHeapGrowth(argv: readonly string[] = process.execArgv): void {
  if (argv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
