/** Sizes in configuration: a number of bytes, or `64MiB`, `512KiB`, `1GiB`, `100MB`, `10kB`. */
import { z } from 'zod';

/** `sync.contributionsMaxBytes` when not given: a contributions file larger than 64 MiB is refused unread. */
export const DEFAULT_CONTRIBUTIONS_MAX_BYTES = 64 * 1024 * 1024;

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1_000,
  mb: 1_000_000,
  gb: 1_000_000_000,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

const SIZE = /^(\d+)\s*([KMG]i?B|B)?$/i;
const ACCEPTED = 'expected a size such as 64MiB, 512KiB, 1GiB, 100MB or a number of bytes';

/** Bytes in `text`, e.g. `64MiB` → 67108864. Throws an Error saying what is accepted. */
export function parseSize(text: string): number {
  const match = SIZE.exec(text.trim());
  if (!match) throw new Error(`${ACCEPTED}; got ${JSON.stringify(text)}`);
  const bytes = Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]!;
  if (!Number.isSafeInteger(bytes)) throw new Error(`size ${JSON.stringify(text)} is too large`);
  return bytes;
}

/** `68157440` → `65 MiB (68,157,440 bytes)`; for messages. */
export function formatSize(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  for (const [unit, factor] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= factor) {
      const amount = bytes / factor;
      return `${Number.isInteger(amount) ? amount : amount.toFixed(1)} ${unit} (${exact})`;
    }
  }
  return exact;
}

/** A size (string with a unit, or a whole number of bytes), transformed to bytes; must be more than zero. */
export const sizeSchema = z.union([z.int(), z.string()], { error: ACCEPTED }).transform((given, ctx) => {
  try {
    const bytes = typeof given === 'number' ? given : parseSize(given);
    if (bytes > 0) return bytes;
    ctx.addIssue({ code: 'custom', message: 'must be more than zero' });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
  return z.NEVER;
});
