/**
 * One option of the configuration file, declared once: its schema, its default, the field it
 * resolves to and what it means. A table of options (one section of the file, such as `store`)
 * gives the section's zod shape ({@link shapeOf}), its resolved type ({@link Resolved}) and its
 * resolved value ({@link resolveFields}); `option-rows.ts` renders each option's row of
 * docs/configuration.md from the same declaration (a test compares them).
 */
import { z } from 'zod';
import type { ValueKinds } from './value-kinds.js';

/** An option the file gives a value: a row of the documentation. */
export interface Leaf {
  /** Validates and converts what the file says (`kinds`: the schemas that depend on the file's place). */
  schema: (kinds: ValueKinds) => z.ZodType;
  /** Its value when the file does not give it, written as the file would write it (`5s`); absent: none. */
  default?: unknown;
  /** The field of the resolved configuration it becomes (`connectTimeoutMs`); absent: its key. */
  field?: string;
  /** The documentation's default when no {@link default} is declared (`(none)`, `off`); absent: derived. */
  shown?: string;
  /** What it means, as docs/configuration.md's row says it (markdown). */
  doc: string;
  /** Its name in earlier versions: a file that still writes it is refused, told the name to write instead. */
  formerly?: string;
}

/** An option holding options of its own (`removalGuard`), each documented under `<its key>.<theirs>`. */
export interface Group {
  schema: (kinds: ValueKinds) => z.ZodType;
  default?: unknown;
  field?: string;
  options: Options;
}

export type Option = Leaf | Group;

/** A section's options, by their keys in the file. */
export type Options = Readonly<Record<string, Option>>;

type Schema<O extends Option> = ReturnType<O['schema']>;
type Applied<O extends Option> = O extends { default: unknown } ? z.ZodPrefault<Schema<O>> : Schema<O>;

/** The zod shape of a section: each option's schema, its default applied. */
export type Shape<T extends Options> = { -readonly [K in keyof T]: Applied<T[K]> };

/** The zod shape of `options`, with `kinds` for the schemas that depend on the file's place. */
export function shapeOf<T extends Options>(options: T, kinds: ValueKinds): Shape<T> {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, option] of Object.entries(options)) {
    const schema = option.schema(kinds);
    shape[key] = 'default' in option ? schema.prefault(option.default as never) : schema;
    if ('formerly' in option && option.formerly)
      shape[option.formerly] = z.undefined({ error: `renamed: write ${key} (the same value)` }).optional();
  }
  return shape as Shape<T>;
}

type FieldOf<O extends Option, K> = O extends { field: infer F extends string } ? F : K;
type Output<O extends Option> = z.output<Applied<O>>;
type MaybeAbsent<T extends Options> = { [K in keyof T]: undefined extends Output<T[K]> ? K : never }[keyof T];
type Flat<T> = { [K in keyof T]: T[K] };

/** A section once resolved: each option under its field, optional where it may be absent. */
export type Resolved<T extends Options> = Flat<
  { [K in Exclude<keyof T, MaybeAbsent<T>> as FieldOf<T[K], K>]: Output<T[K]> } & {
    [K in MaybeAbsent<T> as FieldOf<T[K], K>]?: Output<T[K]>;
  }
>;

/** The parsed section `parsed` under each option's field (an absent option's field holds undefined). */
export function resolveFields<T extends Options>(options: T, parsed: { [K in keyof T]?: unknown }): Resolved<T> {
  const resolved: Record<string, unknown> = {};
  for (const [key, option] of Object.entries(options)) resolved[option.field ?? key] = parsed[key];
  return resolved as Resolved<T>;
}

/** `options` less the keys `omitted`. */
export function omitOptions<T extends Options, K extends keyof T & string>(options: T, ...omitted: K[]): Omit<T, K> {
  return Object.fromEntries(
    Object.entries(options).filter(([key]) => !(omitted as string[]).includes(key)),
  ) as unknown as Omit<T, K>;
}

/** Only the keys `picked` of `options`. */
export function pickOptions<T extends Options, K extends keyof T & string>(options: T, ...picked: K[]): Pick<T, K> {
  return Object.fromEntries(picked.map((key) => [key, options[key]])) as unknown as Pick<T, K>;
}
