/**
 * docs/configuration.md documents every option the configuration accepts, and no other: the
 * configuration's schema, each adapter's policy schema and TIMING_SETTINGS are walked (as JSON
 * Schema, zod's `toJSONSchema`) and compared with the key paths the page's tables name.
 *
 * The page's format: an option is a row of a table whose header starts `| key |`, its key path
 * in backticks in the first column (`providers[]` is each item of a list). Rows under the
 * heading "Timing" name a timing key (given under `defaults:` or on a provider); rows under a
 * heading "Policy of `<adapter>`" name that adapter's policy keys.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DESCRIBED_ADAPTERS } from '../../../src/adapters/described-registry.js';
import { configSchema } from '../../../src/config/load-config.js';
import { TIMING_SETTINGS } from '../../../src/config/timing.js';

const PAGE = join(import.meta.dirname, '../../../docs/configuration.md');

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
}

/** Every leaf key path of `schema` under `at` (an object's keys joined by `.`, a list of objects as `[]`). */
function keyPaths(schema: JsonSchema, at: string): string[] {
  if (schema.properties)
    return Object.entries(schema.properties).flatMap(([key, value]) =>
      keyPaths(value, at === '' ? key : `${at}.${key}`),
    );
  if (schema.type === 'array' && schema.items?.properties) return keyPaths(schema.items, `${at}[]`);
  return [at];
}

const asJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

const TIMING_KEYS = Object.values(TIMING_SETTINGS).map((setting) => setting.key as string);

/** The options the schema accepts: general key paths, timing keys, and each adapter's policy key paths. */
function schemaOptions(): { general: string[]; timing: string[]; policies: Map<string, string[]> } {
  const all = keyPaths(asJson(configSchema('/', DESCRIBED_ADAPTERS)), '');
  const timingAt = (path: string) => /^(defaults|providers\[\])\.([^.]+)$/.exec(path)?.[2];
  const isTiming = (path: string) => path.startsWith('defaults.') || TIMING_KEYS.includes(timingAt(path) ?? '');
  const policies = new Map(
    [...DESCRIBED_ADAPTERS].map(([kind, adapter]) => [
      kind,
      keyPaths(asJson(adapter.policySchema), 'providers[].policy'),
    ]),
  );
  return {
    general: all.filter((path) => !isTiming(path)),
    timing: [
      ...new Set([
        ...TIMING_KEYS,
        ...all.filter((path) => path.startsWith('defaults.')).map((path) => path.slice('defaults.'.length)),
      ]),
    ],
    policies,
  };
}

/** The options the page documents, by the same three kinds. */
function documentedOptions(markdown: string): { general: string[]; timing: string[]; policies: Map<string, string[]> } {
  const general: string[] = [];
  const timing: string[] = [];
  const policies = new Map<string, string[]>();
  let section: { kind: 'general' } | { kind: 'timing' } | { kind: 'policy'; adapter: string } = { kind: 'general' };
  let inKeyTable = false;
  for (const line of markdown.split('\n')) {
    const heading = /^#+\s+(.*)$/.exec(line);
    if (heading) {
      const title = heading[1]!;
      const adapter = /^Policy of `([^`]+)`/.exec(title)?.[1];
      section = adapter
        ? { kind: 'policy', adapter }
        : /^Timing\b/.test(title)
          ? { kind: 'timing' }
          : { kind: 'general' };
      continue;
    }
    if (!line.startsWith('|')) {
      inKeyTable = false;
      continue;
    }
    if (/^\|\s*key\s*\|/.test(line)) {
      inKeyTable = true;
      continue;
    }
    const key = inKeyTable ? /^\|\s*`([^`]+)`\s*\|/.exec(line)?.[1] : undefined;
    if (key === undefined) continue;
    if (section.kind === 'timing') timing.push(key);
    else if (section.kind === 'policy') policies.set(section.adapter, [...(policies.get(section.adapter) ?? []), key]);
    else general.push(key);
  }
  return { general, timing, policies };
}

const missing = (wanted: string[], present: string[]) => wanted.filter((key) => !present.includes(key)).sort();

describe('docs/configuration.md', () => {
  const schema = schemaOptions();
  const page = documentedOptions(readFileSync(PAGE, 'utf8'));

  it('documents every option the configuration schema accepts', () => {
    expect(missing(schema.general, page.general)).toEqual([]);
  });

  it('names no option the configuration schema lacks', () => {
    expect(missing(page.general, schema.general)).toEqual([]);
  });

  it('documents every timing setting, and no other, in its Timing table', () => {
    expect(missing(schema.timing, page.timing)).toEqual([]);
    expect(missing(page.timing, schema.timing)).toEqual([]);
  });

  it("documents every adapter's policy keys, and no other", () => {
    expect([...page.policies.keys()].sort()).toEqual([...schema.policies.keys()].sort());
    for (const [adapter, keys] of schema.policies) {
      expect({ adapter, missing: missing(keys, page.policies.get(adapter) ?? []) }).toEqual({ adapter, missing: [] });
      expect({ adapter, unknown: missing(page.policies.get(adapter) ?? [], keys) }).toEqual({ adapter, unknown: [] });
    }
  });

  it('lists each option once', () => {
    const repeated = (keys: string[]) => keys.filter((key, index) => keys.indexOf(key) !== index);
    expect(repeated(page.general)).toEqual([]);
    expect(repeated(page.timing)).toEqual([]);
    for (const keys of page.policies.values()) expect(repeated(keys)).toEqual([]);
  });
});
