/**
 * The walk before the YAML parser (`scanYaml`): text nested deeper or holding more nodes than its
 * bounds is refused at the line where it passes them, before a node is built; and what it lets
 * through never holds more nodes, or nests deeper, than it counted. The second is a generated
 * property (fast-check) over YAML of every style: block and flow, nesting, anchors and aliases,
 * long and quoted scalars, block scalars, many keys, and fragments of indicators.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCollection, isNode, parseDocument, visit, type Document } from 'yaml';
import { MAX_DEPTH, scanYaml, type YamlBounds } from '../../../src/config/yaml-bounds.js';
import { YamlSource } from '../../../src/config/yaml-source.js';

const bounds = (maxDepth: number, maxNodes: number): YamlBounds => ({ maxDepth, maxNodes, what: 'the test bound' });
const BIG = bounds(MAX_DEPTH, 1_000_000);

/** The line a refusal names. */
function refusedAt(text: string, within: YamlBounds): { bound: string; line: number } | undefined {
  const scan = scanYaml(text, within);
  if (scan.ok) return undefined;
  return { bound: scan.bound, line: text.slice(0, scan.offset).split('\n').length };
}

/** What the parser builds of `text`: its nodes (aliases counted once), and its deepest collection's nesting. */
function built(doc: Document): { nodes: number; depth: number } {
  let nodes = 0;
  let depth = 0;
  visit(doc, {
    Node(_key, node, path) {
      nodes++;
      const around = path.filter((step) => isNode(step) && isCollection(step)).length;
      depth = Math.max(depth, around + (isCollection(node) ? 1 : 0));
    },
  });
  return { nodes, depth };
}

describe('scanYaml', () => {
  it('lets a contributions file of the plain shape through, counting about twice its nodes', () => {
    const text = [
      'consumers:',
      '  - id: photos # the first',
      '    login: app_photos',
      "    secret: 'grants/photos [1].secret'",
      '    values: { keys: ["photos:*", "[[[["], commands: [+@read] }',
      '    note: |',
      '      [[[[ {{{{ - - - ? :',
      '           - - - - - - -',
      '',
    ].join('\n');
    const scan = scanYaml(text, bounds(12, 1_000));
    expect(scan).toEqual({ ok: true, nodes: expect.any(Number) as number });
    const real = built(parseDocument(text)).nodes;
    expect(scan.ok && scan.nodes).toBeGreaterThanOrEqual(real);
    expect(scan.ok && scan.nodes).toBeLessThanOrEqual(2 * real);
  });

  it('refuses flow nesting deeper than the bound at its line, before the rest is read', () => {
    const text = `consumers:\n  - id: a\n    values: { keys: ${'['.repeat(4_500_000)}${']'.repeat(4_500_000)} }\n`;
    expect(refusedAt(text, BIG)).toEqual({ bound: 'depth', line: 3 });
    const scan = scanYaml(text, BIG);
    expect(!scan.ok && scan.offset).toBeLessThan(200);
    expect(!scan.ok && scan.reason).toBe(
      'nested more than 64 levels deep (the test bound); refused before it is parsed',
    );
  });

  it('refuses block nesting, by indentation or by entries on one line', () => {
    expect(refusedAt(`${'- '.repeat(100)}x\n`, BIG)).toEqual({ bound: 'depth', line: 1 });
    const indented = Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}-`).join('\n');
    expect(refusedAt(indented, BIG)?.bound).toBe('depth');
    // a block scalar's lines are its text, however they are indented
    const scalar = `note: |\n${Array.from({ length: 200 }, (_, i) => `  ${' '.repeat(i)}- x`).join('\n')}\n`;
    expect(scanYaml(scalar, BIG).ok).toBe(true);
  });

  it('refuses more nodes than the bound, in any shape', () => {
    expect(refusedAt(`keys: [${'1, '.repeat(300)}1]\n`, bounds(MAX_DEPTH, 200))).toEqual({ bound: 'nodes', line: 1 });
    const keys = Array.from({ length: 300 }, (_, i) => `k${i}: 1`).join('\n');
    expect(refusedAt(keys, bounds(MAX_DEPTH, 200))).toEqual({ bound: 'nodes', line: 51 });
    expect(refusedAt(`a: &a 1\nb: [${'*a, '.repeat(300)}]\n`, bounds(MAX_DEPTH, 200))?.bound).toBe('nodes');
  });

  it('is what YamlSource parses with: beyond a bound is a problem with file, line and bound, and said as such', () => {
    const read = YamlSource.parse('/x/deep.yaml', `a:\n  b: ${'{c: '.repeat(100)}d${'}'.repeat(100)}\n`);
    expect(read).toEqual({
      ok: false,
      beyond: 'depth',
      problems: [
        '/x/deep.yaml:2: nested more than 64 levels deep (the bound on a YAML document); refused before it is parsed',
      ],
    });
  });

  it('tells repeated keys in one pass, at the repeat', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: 1`);
    const read = YamlSource.parse('/x/keys.yaml', [...keys, 'k7: 2', ''].join('\n'));
    expect(read).toEqual({ ok: false, problems: ['/x/keys.yaml:20001: invalid YAML: Map keys must be unique'] });
    expect(YamlSource.parse('/x/keys.yaml', `{${keys.join(', ')}}`).ok).toBe(true);
  });
});

/** A scalar as a writer might type it: plain, quoted, long, or full of indicators. */
const scalar = fc.oneof(
  fc.constantFrom('a', 'photos:*', '+@read', '1', 'null', '~', "it's", 'a b', '"q"', "'s'", '[x]', '{y}', '- z', '#c'),
  fc.string({ maxLength: 12 }),
  fc.nat(3_000).map((n) => 'x'.repeat(n)),
);

/** A tree of YAML rendered in block style at `indent`, with flow parts, anchors and aliases. */
type Tree = { scalar: string } | { list: Tree[] } | { map: Array<[string, Tree]> } | { alias: true };
const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar.map((s) => ({ scalar: s })),
    fc.constant({ alias: true as const }),
    fc.array(tie('tree'), { maxLength: 6 }).map((list) => ({ list })),
    fc
      .array(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), tie('tree')), { maxLength: 6 })
      .map((map) => ({ map })),
  ),
})).tree;

const quote = (s: string) => JSON.stringify(s);

function flow(t: Tree): string {
  if ('scalar' in t) return quote(t.scalar);
  if ('alias' in t) return '*a';
  if ('list' in t) return `[${t.list.map(flow).join(', ')}]`;
  return `{${t.map.map(([k, v]) => `${quote(k)}: ${flow(v)}`).join(', ')}}`;
}

function block(t: Tree, indent: number, style: number): string {
  const pad = ' '.repeat(indent);
  if ('list' in t && t.list.length > 0 && style % 3 !== 0)
    return t.list.map((item, i) => `\n${pad}- ${block(item, indent + 2, style + i).trimStart()}`).join('');
  if ('map' in t && t.map.length > 0 && style % 3 !== 0)
    return t.map.map(([k, v], i) => `\n${pad}${quote(k)}: ${block(v, indent + 2, style + i)}`).join('');
  if ('scalar' in t && style % 5 === 0) return `|\n${pad}  ${t.scalar.replace(/\n/g, ' ')}\n${pad}`;
  return style % 7 === 0 ? `&a ${flow(t)}` : flow(t);
}

/** YAML as a writer (or an attacker) might send it: rendered trees, fragments of indicators, and both spliced. */
const yamlText = fc.oneof(
  fc.tuple(tree, fc.nat(20)).map(([t, style]) => `root: &a x\ndoc:${block(t, 2, style)}\n`),
  fc
    .array(
      fc.constantFrom('[', ']', '{', '}', ',', ': ', '- ', '? ', '&a ', '*a', '\n', '  ', 'x', "'", '"', '#', '|'),
      {
        maxLength: 200,
      },
    )
    .map((parts) => parts.join('')),
  fc.tuple(tree, fc.nat(20), fc.string({ maxLength: 20 }), fc.nat(400)).map(([t, style, noise, at]) => {
    const text = `doc:${block(t, 2, style)}\n`;
    return text.slice(0, at) + noise + text.slice(at);
  }),
);

describe('scanYaml, generated YAML', () => {
  it('never lets through more nodes or deeper nesting than it counted, and the parser always returns', () => {
    fc.assert(
      fc.property(yamlText, fc.integer({ min: 2, max: 12 }), fc.integer({ min: 4, max: 400 }), (text, depth, nodes) => {
        const within = bounds(depth, nodes);
        const scan = scanYaml(text, within);
        if (!scan.ok) {
          expect(['depth', 'nodes']).toContain(scan.bound);
          expect(scan.offset).toBeLessThanOrEqual(text.length);
          return;
        }
        const doc = parseDocument(text, { uniqueKeys: false });
        const real = built(doc);
        // a document the parser refuses (its recovery's nodes and nesting) too
        expect(real.nodes, text).toBeLessThanOrEqual(scan.nodes);
        expect(real.depth, text).toBeLessThanOrEqual(depth);
        // read as holdfast reads it: a source, or problems (never a throw)
        const read = YamlSource.parse('/x/generated.yaml', text, within);
        expect(read.ok || read.problems.length > 0).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  }, 120_000);
});
