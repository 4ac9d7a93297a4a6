/**
 * Loaded into an engine child by `compare-throughput.ts` (`--expose-gc --import child-heap.ts`):
 * every second it tells its parent its heap, and every five seconds what a full GC leaves of it
 * (the heap the process keeps, as against what it has not collected yet).
 */
const gc = (globalThis as { gc?: () => void }).gc;
let kept: number | null = null;
if (gc) {
  setInterval(() => {
    gc();
    kept = process.memoryUsage().heapUsed;
  }, 5_000).unref();
}
setInterval(() => {
  const { heapUsed, heapTotal } = process.memoryUsage();
  process.send?.({ type: 'heap', heapUsed, heapTotal, kept });
}, 1_000).unref();
