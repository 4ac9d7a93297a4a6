/**
 * A contributions file beyond holdfast's bounds on its shape is refused whole
 * (`CONTRIBUTIONS_BEYOND_BOUNDS`), naming file, line and bound, before it is parsed: nested too
 * deep, too many YAML nodes, or more consumers than `maxConsumers`; in the plain shape (read an
 * entry at a time) and read whole alike. Two entries naming one grant secret: the later refused
 * alone. And generated contributions (fast-check) always come back declared or refused with a
 * typed error, never a throw of another kind.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { loadContributions, readContributions } from '../../../src/desired/load-contributions.js';
import { HoldfastError, isHoldfastError } from '../../../src/errors/holdfast-error.js';
import { providerConfig } from '../../support/provider-config.js';

const fakeKind: AdapterKind = {
  kind: 'fake',
  valuesSchema: z.unknown(),
  policySchema: z.unknown(),
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};

const dir = mkdtempSync(join(tmpdir(), 'holdfast-parse-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let file: string;
let n = 0;
beforeEach(() => {
  file = join(dir, `cache-${n++}.yaml`);
});

function provider(more: Partial<ProviderConfig> = {}): ProviderConfig {
  return providerConfig({ adapter: fakeKind, contributionsPath: file, ...more });
}

/** The refusal's code and the problems it lists. */
async function refusal(
  text: string,
  more: Partial<ProviderConfig> = {},
): Promise<{ code: string; problems: string[] }> {
  writeFileSync(file, text);
  const error: unknown = await loadContributions(provider(more)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  return { code: (error as HoldfastError).code, problems: [...(error as HoldfastError).problems] };
}

const entry = (i: number, values = '{ keys: [a] }', secret = `grants/c${i}`) =>
  `  - id: c${i}\n    login: app_c${i}\n    secret: ${secret}\n    values: ${values}\n`;
const DEEP = 2_000_000;
const nested = `{ keys: ${'['.repeat(DEEP)}${']'.repeat(DEEP)} }`;

describe('a contributions file beyond the bounds on its shape', () => {
  it('nested millions deep, in the plain shape: refused at the entry, before it is parsed', async () => {
    expect(await refusal(`consumers:\n${entry(0)}${entry(1, nested)}`)).toEqual({
      code: 'CONTRIBUTIONS_BEYOND_BOUNDS',
      problems: [
        `${file}:9: nested more than 64 levels deep (holdfast's bound on one contributions entry); refused before it is parsed`,
      ],
    });
  });

  it('nested millions deep, read whole (another shape): refused the same way, with the bound on a whole file', async () => {
    expect(await refusal(`consumers: [\n  { id: c0, login: app_c0, secret: s, values: ${nested} }]\n`)).toEqual({
      code: 'CONTRIBUTIONS_BEYOND_BOUNDS',
      problems: [
        `${file}:2: nested more than 64 levels deep (holdfast's bound on a contributions file read whole); refused before it is parsed`,
      ],
    });
  });

  it('more YAML nodes than the bound in one entry: refused, by line', async () => {
    const wide = `{ keys: [${'a, '.repeat(300_000)}a] }`;
    expect(await refusal(`consumers:\n${entry(0)}${entry(1, wide)}`)).toEqual({
      code: 'CONTRIBUTIONS_BEYOND_BOUNDS',
      problems: [
        `${file}:9: more than 200,000 YAML nodes (holdfast's bound on one contributions entry); refused before it is parsed`,
      ],
    });
  });

  it('10,000 entries over maxConsumers: refused by count, naming the bound and the first entry beyond it', async () => {
    const text = `consumers:\n${Array.from({ length: 10_000 }, (_, i) => entry(i)).join('')}`;
    const bound = { max: 8_000, setting: 'providers[0].maxConsumers' };
    expect(await refusal(text, { maxConsumers: bound })).toEqual({
      code: 'CONTRIBUTIONS_BEYOND_BOUNDS',
      problems: [
        `${file}:32002: consumers: 10,000 consumers, more than providers[0].maxConsumers (8,000); refused whole, before its entries are read`,
      ],
    });
    // read whole (a flow list) alike, by the default's name
    const flow = `consumers: [\n${Array.from({ length: 12 }, (_, i) => `  { id: c${i}, login: app_c${i}, secret: s${i} },`).join('\n')}\n]\n`;
    expect(await refusal(flow, { maxConsumers: { max: 10, setting: 'sync.maxConsumers' } })).toEqual({
      code: 'CONTRIBUTIONS_BEYOND_BOUNDS',
      problems: [
        `${file}:12: consumers: 12 consumers, more than sync.maxConsumers (10); refused whole, before its entries are read`,
      ],
    });
    writeFileSync(file, text);
    expect((await loadContributions(provider())).consumers).toHaveLength(10_000);
  });
});

describe('one grant secret named by several entries', () => {
  it('the first keeps it; each later one is refused alone, naming file, line and secret, however its path is written', async () => {
    writeFileSync(
      file,
      `consumers:\n${entry(0)}${entry(1, undefined, 'grants/./c0')}${entry(2)}${entry(3, undefined, `${dir}/grants/c0`)}`,
    );
    const said = (i: number, line: number) =>
      `${file}:${line}: consumers[${i}].secret: names the grant secret of consumers[0] (c0); a grant secret serves one consumer, refused`;
    const { consumers } = await loadContributions(provider());
    expect(consumers.map((c) => c.desired.problems)).toEqual([[], [said(1, 8)], [], [said(3, 16)]]);
    // the specs read again a chunk at a time (as the sync delivers them) say the same
    const read = await readContributions(provider());
    expect((await read.specs([3, 1])).map((c) => c.desired.problems)).toEqual([[said(3, 16)], [said(1, 8)]]);
    expect((await read.specs([0])).map((c) => c.desired.problems)).toEqual([[]]);
  });

  it('two paths to one file through a directory symlink are one secret', async () => {
    mkdirSync(join(dir, 'real'), { recursive: true });
    writeFileSync(join(dir, 'real/s'), 'a-password-of-its-own\n');
    symlinkSync(join(dir, 'real'), join(dir, 'linked'));
    writeFileSync(file, `consumers:\n${entry(0, undefined, 'real/s')}${entry(1, undefined, 'linked/s')}`);
    const { consumers } = await loadContributions(provider());
    expect(consumers[1]!.desired.problems).toContain(
      `${file}:8: consumers[1].secret: names the grant secret of consumers[0] (c0); a grant secret serves one consumer, refused`,
    );
  });
});

/** A YAML value of generated shape: nesting, anchors and aliases, long scalars, many keys. */
const value: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', '"q"', "'s'", '*x', '&x v', '~', '1'),
    fc.nat(20_000).map((k) => `"${'x'.repeat(k)}"`),
    fc.array(tie('value'), { maxLength: 8 }).map((items) => `[${items.join(', ')}]`),
    fc.array(tie('value'), { maxLength: 8 }).map((items) => `{${items.map((v, i) => `k${i}: ${v}`).join(', ')}}`),
    fc
      .tuple(fc.nat(80), fc.constantFrom('[', '{'))
      .map(([k, open]) => `${open.repeat(k)}${(open === '[' ? ']' : '}').repeat(k)}`),
    fc.nat(3_000).map((k) => `{${Array.from({ length: k }, (_, i) => `k${i}: &a${i} ${i}`).join(', ')}}`),
  ),
})).value;

describe('generated contributions', () => {
  it('are declared or refused with a typed error, naming the file', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(value, { maxLength: 4 }), fc.boolean(), async (values, plain) => {
        const items = values.map((v, i) => entry(i, v));
        const text = plain
          ? `consumers:\n${items.join('')}`
          : `consumers: [\n${values.map((v, i) => `  { id: c${i}, login: app_c${i}, secret: s${i}, values: ${v} }`).join(',\n')}]\n`;
        writeFileSync(file, text);
        const outcome = await loadContributions(provider()).then(
          (state) => ({ ok: true as const, state }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (outcome.ok) expect(outcome.state.consumers).toHaveLength(values.length);
        else {
          expect(
            isHoldfastError(outcome.error, 'CONTRIBUTIONS_INVALID', 'CONTRIBUTIONS_BEYOND_BOUNDS'),
            String(outcome.error),
          ).toBe(true);
          for (const problem of (outcome.error as HoldfastError).problems)
            expect(problem.startsWith(`${file}:`)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
