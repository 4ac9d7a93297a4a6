/**
 * docs/configuration.md's rows, rendered from the declarations: `| \`key\` | default | meaning |`.
 * `test/unit/docs/configuration-rows.test.ts` compares them with the page.
 */
import { CONFIG_SECTIONS } from './config-options.js';
import { durationSchema, formatDuration } from './duration.js';
import type { Leaf, Options } from './option.js';
import { TIMING_ENTRIES, TIMING_SETTINGS } from './timing.js';
import { valueKinds } from './value-kinds.js';

/** A documented option: its key path and its row. */
export interface OptionRow {
  key: string;
  row: string;
}

const row = (key: string, shown: string, meaning: string) => `| \`${key}\` | ${shown} | ${meaning} |`;

/** What the file would write for `value`, in backticks. */
function literal(value: unknown): string {
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** The default column of `option`: its declared default, else what it says, else none or required. */
function shownDefault(option: Leaf): string {
  if ('default' in option) return literal(option.default);
  if (option.shown !== undefined) return option.shown;
  return option.schema(KINDS).safeParse(undefined).success ? '(none)' : '(required)';
}

/** Value kinds enough to ask a schema whether it takes a missing value (none is read for one). */
const KINDS = valueKinds('/', new Map());

const TIMING_KEYS = new Set<string>(TIMING_ENTRIES.map(([, setting]) => setting.key));

/** Every option of `options` under `at`, groups walked, timing settings left to their own table. */
function rowsOf(options: Options, at: string): OptionRow[] {
  return Object.entries(options).flatMap(([key, option]) => {
    const path = at === '' ? key : `${at}.${key}`;
    if ('options' in option) return rowsOf(option.options, path);
    if (at === 'providers[]' && TIMING_KEYS.has(key)) return [];
    const former = option.formerly && (at === '' ? option.formerly : `${at}.${option.formerly}`);
    return [
      { key: path, row: row(path, shownDefault(option), option.doc) },
      ...(former
        ? [{ key: former, row: row(former, '(renamed)', `write \`${path}\` instead: refused under this name`) }]
        : []),
    ];
  });
}

/** The rows of every option outside the Timing and policy tables. */
export function generalRows(): OptionRow[] {
  return CONFIG_SECTIONS.flatMap(([at, options]) => rowsOf(options, at));
}

/** The Timing table's rows: a bound to another setting opens the meaning (`at most \`verifyEvery\`: …`). */
export function timingRows(): OptionRow[] {
  return TIMING_ENTRIES.map(([field, setting]) => {
    const value = TIMING_SETTINGS[field].default as number | undefined;
    const shown =
      value === undefined ? 'off' : setting.schema === durationSchema ? literal(formatDuration(value)) : literal(value);
    const bound = setting.atLeast ?? setting.atMost;
    const meaning = bound ? `at ${setting.atLeast ? 'least' : 'most'} \`${bound}\`: ${setting.doc}` : setting.doc;
    return { key: setting.key, row: row(setting.key, shown, meaning) };
  });
}
