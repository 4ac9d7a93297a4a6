/**
 * How far V8 lets a holdfast process's heap grow past what it keeps.
 *
 * - **The old generation** grows 30% past what its last full GC kept before it runs the next.
 *   V8's own choice goes up to four times, and a busy engine promotes much short-lived garbage
 *   (a start-up's contributions parse, every job's data), so its RSS sat at three to four times
 *   what it keeps: 594 MB at the peak of a 100k-consumer start-up whose heap kept under 100 MB.
 * - **The young generation** stays at the size V8 starts it with (a 1 MB semi-space) through the
 *   start-up, instead of doubling up to 16 MB semi-spaces whenever much of it survives, as it does
 *   throughout a start-up's parse: that was 32 MB of RSS at the start-up's peak. Once the start-up
 *   has delivered what it read ({@link releaseYoungGeneration}), it grows as V8 would have it:
 *   a young generation of 2 MB promotes what 256 checks and heals in flight hold for a moment,
 *   and the engine spent 22 % more CPU a heal on it (`test/bench/heal-at-scale.ts`: 2.42–2.53
 *   against 1.88–1.98 ms; 10,000 logins healed in 26.5–27.2 s against 22.4–23.5 s).
 *
 * Measured by `test/bench/cold-start.ts`. V8 reads both flags when it next collects, so they take
 * effect when set at run time (`--max-semi-space-size` would not: V8 sizes the young generation's
 * bound once, as it starts). A process started with its own value of either kind (on its command
 * line or in `NODE_OPTIONS`) keeps it.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeOptions as startedWith } from '../config/environment.js';

export const HEAP_GROWING_PERCENT = 30;

/** The young generation's bound: a flag of this kind on the command line or in `NODE_OPTIONS` is the process's own. */
const YOUNG_BOUND = {
  given: /--(?:min|max)[-_]semi[-_]space[-_]size\b|--semi[-_]space[-_]growth[-_]factor\b/,
  flag: '--semi-space-growth-factor=1',
};

/** The flags V8 is given, unless the process was started with one of their kind. */
const BOUNDS: ReadonlyArray<{ given: RegExp; flag: string }> = [
  { given: /--heap[-_]growing[-_]percent\b/, flag: `--heap-growing-percent=${HEAP_GROWING_PERCENT}` },
  YOUNG_BOUND,
];

/** V8's own growth factor of the young generation. */
const V8_SEMI_SPACE_GROWTH = 2;

/** Whether this process was started with a flag of `given`'s kind. */
function startedWithOwn(given: RegExp, argv: readonly string[], nodeOptions: string): boolean {
  return given.test([...argv, nodeOptions].join(' '));
}

export function boundHeapGrowth(argv: readonly string[] = process.execArgv, nodeOptions: string = startedWith()): void {
  for (const { given, flag } of BOUNDS) if (!startedWithOwn(given, argv, nodeOptions)) setFlagsFromString(flag);
}

/**
 * Lets the young generation grow again as V8 would (up to its 16 MB semi-spaces), unless the process was started with
 * its own bound; called once the start-up's sync has delivered.
 */
export function releaseYoungGeneration(
  argv: readonly string[] = process.execArgv,
  nodeOptions: string = startedWith(),
): void {
  if (!startedWithOwn(YOUNG_BOUND.given, argv, nodeOptions))
    setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH}`);
}
