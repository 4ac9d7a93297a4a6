import { z } from 'zod';

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
] as const;

/** Units largest first, each at most once: `1d`, `1h30m`, `2m30s`, `1s500ms`. */
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;

const ACCEPTED = 'expected a duration such as 500ms, 30s, 5m, 1h, 1d or 1h30m (units ms, s, m, h, d, largest first)';

/** Milliseconds in `text`, e.g. `1h30m` → 5400000. Throws an Error saying what is accepted. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text);
  if (!match || text === '') throw new Error(`${ACCEPTED}; got ${JSON.stringify(text)}`);
  let ms = 0;
  UNITS.forEach(([, factor], index) => {
    const amount = match[index + 1];
    if (amount !== undefined) ms += Number(amount) * factor;
  });
  if (!Number.isSafeInteger(ms)) throw new Error(`duration ${JSON.stringify(text)} is too long`);
  return ms;
}

/** `5400000` → `1h30m`; the inverse of {@link parseDuration}, for messages. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const [unit, factor] of UNITS) {
    const amount = Math.floor(rest / factor);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * factor;
  }
  return text;
}

/** A duration string, transformed to milliseconds; must be more than zero. */
export const durationSchema = z
  .string({
    error: (issue) => {
      if (issue.input === undefined) return undefined;
      return typeof issue.input === 'number' ? `${ACCEPTED}; a bare number like ${issue.input} has no unit` : ACCEPTED;
    },
  })
  .transform((text, ctx) => {
    try {
      const ms = parseDuration(text);
      if (ms > 0) return ms;
      ctx.addIssue({ code: 'custom', message: 'must be more than zero' });
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
    return z.NEVER;
  });
