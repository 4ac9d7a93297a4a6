/**
 * Each option is declared once (src/config/option.ts and the tables `config-options.ts` lists): its default, written as
 * the file would write it, is a value its own schema accepts, and no two options of a section resolve to one field.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS } from '../../../src/config/config-options.js';
import type { Leaf, Options } from '../../../src/config/option.js';
import { valueKinds } from '../../../src/config/value-kinds.js';

const kinds = valueKinds('/', new Map());

/** Every option of `options` under `at`, groups walked: its key path and its declaration. */
function leaves(options: Options, at: string): Array<[string, Leaf]> {
  return Object.entries(options).flatMap(([key, option]) => {
    const path = at === '' ? key : `${at}.${key}`;
    return 'options' in option ? leaves(option.options, path) : [[path, option] as [string, Leaf]];
  });
}

const declared = CONFIG_SECTIONS.flatMap(([at, options]) => leaves(options, at));

describe('option declarations', () => {
  it('find the options of every section', () => {
    expect(declared.map(([path]) => path)).toEqual(
      expect.arrayContaining(['queue.url', 'store.connectTimeout', 'fingerprintKeyFile', 'providers[].orphans.every']),
    );
  });

  it('give each a default its own schema accepts', () => {
    const refused = declared
      .filter(([, option]) => 'default' in option)
      .map(([path, option]) => [path, option.schema(kinds).safeParse(option.default)] as const)
      .filter(([, parsed]) => !parsed.success)
      .map(([path, parsed]) => `${path}: ${parsed.error?.issues[0]?.message}`);
    expect(refused).toEqual([]);
  });

  it('resolve no two options of a section to one field', () => {
    const sections: Array<readonly [string, Options]> = [...CONFIG_SECTIONS];
    for (const [, options] of sections)
      for (const [key, option] of Object.entries(options))
        if ('options' in option) sections.push([key, option.options]);
    for (const [at, options] of sections) {
      const fields = Object.entries(options).map(([key, option]) => option.field ?? key);
      expect({ at, repeated: fields.filter((field, i) => fields.indexOf(field) !== i) }).toEqual({ at, repeated: [] });
    }
  });
});
