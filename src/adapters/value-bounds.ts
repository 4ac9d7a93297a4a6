/**
 * Bounds on what one consumer's entry may hold, shared by every adapter's values schema: a list
 * is capped by count and by total bytes and may not name an item twice, and a string by its bytes.
 * The schema is the one the contributions loader and the worker's spec check both parse with
 * (`src/policy/spec-check.ts`), so a job written into the queue by hand is held to the same bounds.
 *
 * An issue raised by a bound carries {@link BOUND_PARAMS}: the loader refuses that entry alone
 * (the file's other entries are applied as usual), naming file, line, field and the limit. A
 * list over its count is refused before any of its items is looked at, in one problem.
 */
import { z } from 'zod';
import { formatSize } from '../text/size.js';

/** At most `maxItems` items, together at most `maxBytes` bytes (UTF-8). */
export interface ListBound {
  maxItems: number;
  maxBytes: number;
  /** What one item is, in the plural: `key patterns`. */
  noun: string;
}

/** The params of an issue a bound raised; {@link isBoundIssue} finds them. */
export const BOUND_PARAMS = { holdfastBound: true } as const;

/** True when a values schema's `issue` is a bound's: the entry is refused alone, not the file. */
export function isBoundIssue(issue: { code?: string; params?: unknown }): boolean {
  if (issue.code !== 'custom') return false;
  const params = issue.params as { holdfastBound?: unknown } | undefined;
  return params?.holdfastBound === true;
}

type Context = z.core.$RefinementCtx;

function bound(ctx: Context, message: string, path: PropertyKey[] = []): void {
  ctx.addIssue({ code: 'custom', message, params: { ...BOUND_PARAMS }, path });
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Text that no terminal acts on and that reads as written: C0 and C1 controls and Unicode format
 * characters (`\p{Cf}`: bidirectional overrides such as U+202E, zero-width joiners) are refused.
 */
export const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;

/** Unicode format characters alone (for a schema that says controls in its own words). */
export const FORMAT = /\p{Cf}/u;

/** A string of at most `maxBytes` bytes (UTF-8); longer is a bound's issue naming the limit. */
export function boundedString<T extends z.ZodType<string, string>>(
  schema: T,
  maxBytes: number,
): z.ZodType<z.output<T>> {
  return z
    .string()
    .superRefine((text, ctx) => {
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > maxBytes) bound(ctx, `is ${count(bytes)} bytes long, more than the ${count(maxBytes)} allowed`);
    })
    .pipe(schema);
}

/** The first repeated item of `items` and how many repeats there are in all; undefined when none repeats. */
function repeats(items: readonly unknown[]): { index: number; first: number; more: number } | undefined {
  const seen = new Map<string, number>();
  let found: { index: number; first: number } | undefined;
  let more = 0;
  items.forEach((item, index) => {
    const key = typeof item === 'string' ? item : (JSON.stringify(item) ?? String(item));
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else if (found === undefined) found = { index, first };
    else more++;
  });
  return found && { ...found, more };
}

/**
 * A list of `item`s within `limit`, no item twice. Over its count or bytes, the list is refused
 * in one problem before its items are parsed; a repeat is one problem naming the first one's
 * index and the earlier index it repeats, and how many more repeats there are.
 */
export function boundedList<T extends z.ZodType>(item: T, limit: ListBound): z.ZodType<Array<z.output<T>>> {
  const { maxItems, maxBytes, noun } = limit;
  const allowed = `at most ${count(maxItems)} ${noun}, ${formatSize(maxBytes)} in all`;
  return z
    .array(z.unknown())
    .superRefine((items, ctx) => {
      if (items.length > maxItems) {
        bound(ctx, `${count(items.length)} ${noun}, more than the ${count(maxItems)} allowed (${allowed})`);
        return;
      }
      let bytes = 0;
      for (const entry of items) bytes += typeof entry === 'string' ? Buffer.byteLength(entry, 'utf8') : 0;
      if (bytes > maxBytes) {
        bound(ctx, `${formatSize(bytes)} of ${noun}, more than the ${formatSize(maxBytes)} allowed (${allowed})`);
        return;
      }
      const repeated = repeats(items);
      if (repeated) {
        const more = repeated.more > 0 ? ` (and ${count(repeated.more)} more repeats)` : '';
        bound(ctx, `repeats item [${repeated.first}]; each of the ${noun} may be listed once${more}`, [repeated.index]);
      }
    })
    .pipe(z.array(item));
}
