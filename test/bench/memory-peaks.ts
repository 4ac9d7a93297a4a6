/**
 * This process's memory, as the benches that measure a read in process report it: peaks sampled every 20 ms, and
 * `/proc/self/status`.
 */
import { readFileSync } from 'node:fs';

/** Bytes in MB, one decimal. */
export const mb = (bytes: number): number => Math.round(bytes / 1e5) / 10;

/** A `/proc/self/status` value (`VmHWM`, `VmRSS`) in MB. */
export const vm = (field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;

/** Samples the heap and RSS every 20 ms from now; `stop` gives their peaks (bytes). */
export function samplePeaks(): { stop: () => { heap: number; rss: number } } {
  const peak = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
  const sampler = setInterval(() => {
    const { heapUsed, rss } = process.memoryUsage();
    peak.heap = Math.max(peak.heap, heapUsed);
    peak.rss = Math.max(peak.rss, rss);
  }, 20);
  return {
    stop: () => {
      clearInterval(sampler);
      return peak;
    },
  };
}
