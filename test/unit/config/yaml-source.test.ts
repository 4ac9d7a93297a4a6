import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { YamlSource, formatPath } from '../../../src/config/yaml-source.js';

const text = ['top:', '  list:', '    - name: a', '    - name: b', '      extra: 1', 'other: 2', ''].join('\n');

function parse(yaml: string): YamlSource {
  const read = YamlSource.parse('/x/file.yaml', yaml);
  if (!read.ok) throw new Error(read.problems.join('\n'));
  return read.source;
}

describe('YamlSource', () => {
  it('finds the line of a field, or of its nearest parent when missing', () => {
    const source = parse(text);
    expect(source.lineOf(['top', 'list', 1, 'name'])).toBe(4);
    expect(source.lineOf(['top', 'list', 1, 'missing'])).toBe(4);
    expect(source.lineOf(['top', 'list', 5])).toBe(2);
    expect(source.lineOf(['other'])).toBe(6);
    expect(source.lineOf([])).toBe(1);
  });

  it('turns zod issues into file:line: field: reason', async () => {
    const source = parse(text);
    const schema = z.strictObject({
      top: z.strictObject({ list: z.array(z.strictObject({ name: z.string(), id: z.string() })) }),
      other: z.string(),
    });
    const problems: string[] = [];
    expect(await source.check(schema, source.value, problems)).toEqual({ ok: false });
    expect(problems).toEqual([
      '/x/file.yaml:3: top.list[0].id: required',
      '/x/file.yaml:4: top.list[1].id: required',
      '/x/file.yaml:5: top.list[1].extra: unknown field',
      '/x/file.yaml:6: other: Invalid input: expected string, received number',
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    const read = YamlSource.parse('/x/file.yaml', 'a: 1\nb: [\n');
    expect(read).toEqual({ ok: false, problems: [expect.stringMatching(/^\/x\/file\.yaml:3: invalid YAML: /)] });
    expect(YamlSource.parse('/x/file.yaml', 'a: 1\na: 2\n')).toEqual({
      ok: false,
      problems: ['/x/file.yaml:2: invalid YAML: Map keys must be unique'],
    });
  });

  it('formats paths with dots and indexes', () => {
    expect(formatPath(['consumers', 1, 'values', 'keys', 0])).toBe('consumers[1].values.keys[0]');
    expect(formatPath([])).toBe('(top level)');
  });
});
