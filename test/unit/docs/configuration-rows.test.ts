/**
 * docs/configuration.md's option rows say what the declarations say: each row of the general
 * tables and of the Timing table is the one `src/config/option-rows.ts` renders from the option's
 * declaration (its default and its meaning), so the page and the code cannot drift apart. A
 * failure shows the row the declaration gives: copy it to the page, or fix the declaration.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generalRows, timingRows, type OptionRow } from '../../../src/config/option-rows.js';

const PAGE = join(import.meta.dirname, '../../../docs/configuration.md');

/** The page's option rows by key, in the general tables and in the Timing table (policy tables left out). */
function pageRows(markdown: string): { general: Map<string, string>; timing: Map<string, string> } {
  const general = new Map<string, string>();
  const timing = new Map<string, string>();
  let section: 'general' | 'timing' | 'policy' = 'general';
  let inKeyTable = false;
  for (const line of markdown.split('\n')) {
    const heading = /^#+\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) {
      section = /^Policy of `/.test(heading) ? 'policy' : /^Timing\b/.test(heading) ? 'timing' : 'general';
      continue;
    }
    if (!line.startsWith('|')) inKeyTable = false;
    else if (/^\|\s*key\s*\|/.test(line)) inKeyTable = true;
    else {
      const key = inKeyTable ? /^\|\s*`([^`]+)`\s*\|/.exec(line)?.[1] : undefined;
      if (key !== undefined && section !== 'policy') (section === 'timing' ? timing : general).set(key, line);
    }
  }
  return { general, timing };
}

/** Each declared row the page does not hold as it is: the declaration's row beside the page's. */
function disagreements(declared: OptionRow[], page: Map<string, string>) {
  return declared
    .filter(({ key, row }) => page.get(key) !== row)
    .map(({ key, row }) => ({ key, declared: row, page: page.get(key) ?? '(no row)' }));
}

describe('docs/configuration.md rows', () => {
  const page = pageRows(readFileSync(PAGE, 'utf8'));

  it('gives each option the default and meaning of its declaration', () => {
    expect(disagreements(generalRows(), page.general)).toEqual([]);
  });

  it('gives each timing setting the default, bound and meaning of TIMING_SETTINGS', () => {
    expect(disagreements(timingRows(), page.timing)).toEqual([]);
  });

  it('has a row only for a declared option', () => {
    const declared = new Set([...generalRows(), ...timingRows()].map(({ key }) => key));
    expect([...page.general.keys(), ...page.timing.keys()].filter((key) => !declared.has(key))).toEqual([]);
  });
});
