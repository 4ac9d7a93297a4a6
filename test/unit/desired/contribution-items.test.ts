/**
 * A contributions file of the plain shape is read one item at a time (no tree of the whole
 * document held): what it declares, and every problem it is refused for (file, line, field),
 * are exactly what reading it as one document says. Any other shape is read as one document.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import { YamlSource } from '../../../src/config/yaml-source.js';
import { itemSpans } from '../../../src/desired/contribution-items.js';
import { declaredIn, readContributions } from '../../../src/desired/load-contributions.js';
import { specDigest } from '../../../src/desired/spec-digest.js';
import { providerConfig } from '../../support/provider-config.js';

const fakeKind: AdapterKind<{ keys: string[] }, { keyPrefix: string }> = {
  kind: 'fake',
  valuesSchema: z.strictObject({ keys: z.array(z.string()).default([]) }),
  policySchema: z.strictObject({ keyPrefix: z.string() }),
  violations: ({ values }, policy) =>
    values.keys
      .filter((k) => !k.startsWith(policy.keyPrefix))
      .map((k) => `values.keys: "${k}" is outside the policy's prefix`),
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-items-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const provider = () =>
  providerConfig({ adapter: fakeKind, contributionsPath: join(dir, 'cache.yaml'), policy: { keyPrefix: 'app:' } });

/** What a reading gives: the state, or the refusal's message. */
const outcome = (text: string, whole: boolean) =>
  declaredIn(provider(), text, { whole }).then(
    (state) => ({ state }),
    (error: unknown) => ({ error: (error as Error).message }),
  );

const PLAIN = [
  // valid, flow and block items, a comment between them, a symlink out, a policy refusal
  `# the mesh's file\nconsumers:   # all of them\n  - id: a\n    login: app_a\n    secret: grants/a.secret\n    values:\n      keys: ['app:a:*']\n# between\n  - { id: b, login: app_b, secret: grants/link.secret }\n  - id: c\n    login: app_c\n    secret: grants/c.secret\n    values: { keys: ['other:*'] }\n`,
  // items at column 0
  `consumers:\n- id: a\n  login: app_a\n  secret: grants/a.secret\n- id: b\n  login: app_b\n  secret: |\n    grants/b.secret\n`,
  // every structural problem: unknown fields, missing ones, a list in the list, nothing, duplicates
  `consumers:\n  - id: a\n    login: app_a\n    secret: grants/a.secret\n    colour: red\n  - id: Bad Id\n    login: app_b\n  - - id: x\n  -\n  - id: a\n    login: app_a\n    secret: s\n    values: { keys: [1] }\n  - just a string\n  - { id: d, login: app_a, secret: s }\n`,
  // a YAML error inside one item, an alias to an anchor in another, an unclosed quote across items
  `consumers:\n  - id: a\n    login: app_a\n    secret: s\n    secret: t\n  - id: b\n    login: [app_b\n`,
  `consumers:\n  - &one { id: a, login: app_a, secret: s }\n  - *one\n`,
  `consumers:\n  - id: "a\n  - b"\n    login: app_a\n    secret: s\n`,
];

describe('a contributions file read one item at a time', () => {
  it('declares and refuses exactly as the whole document does', async () => {
    mkdirSync(join(dir, 'grants'));
    const outside = mkdtempSync(join(tmpdir(), 'holdfast-outside-'));
    try {
      writeFileSync(join(outside, 'real.secret'), 'a-long-password\n');
      symlinkSync(join(outside, 'real.secret'), join(dir, 'grants/link.secret'));
      writeFileSync(join(dir, 'grants/a.secret'), 'a-long-password\n');
      const whole = vi.spyOn(YamlSource, 'parse');
      for (const [i, text] of PLAIN.entries()) {
        expect(itemSpans(text)).toBeDefined();
        whole.mockClear();
        const byItem = await outcome(text, false);
        // the first three are read one item at a time; the others fall back (their items do not parse alone)
        expect(whole).toHaveBeenCalledTimes(i < 3 ? 0 : 1);
        expect(byItem).toEqual(await outcome(text, true));
      }
      whole.mockRestore();
      const first = await outcome(PLAIN[0]!, false);
      expect('state' in first && first.state.consumers.map((c) => c.desired.problems.length)).toEqual([0, 1, 1]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('read for the sync, keeps each consumer in brief and gives the same specs again on demand, for any shape', async () => {
    mkdirSync(join(dir, 'grants'));
    writeFileSync(join(dir, 'grants/a.secret'), 'a-long-password\n');
    const flow = `consumers: [{ id: a, login: app_a, secret: grants/a.secret }, { id: b, login: app_b, secret: s, values: { keys: ['x:*'] } }]\n`;
    for (const text of [...PLAIN, flow]) {
      writeFileSync(join(dir, 'cache.yaml'), text);
      const whole = await outcome(text, true);
      const read = await readContributions(provider()).then(
        (r) => ({ read: r }),
        (error: unknown) => ({ error: (error as Error).message }),
      );
      if ('error' in whole) {
        expect(read).toEqual({ error: whole.error });
        continue;
      }
      if (!('read' in read)) throw new Error(`refused: ${read.error}`);
      const declared = whole.state.consumers;
      expect(read.read.consumers.toArray()).toEqual(
        declared.map(({ key, desired }, index) => ({ key, digest: specDigest(desired), index })),
      );
      expect(await read.read.specs(declared.map((_, i) => i))).toEqual(declared);
      expect(await read.read.specs([declared.length - 1, 0])).toEqual([declared.at(-1), declared[0]]);
    }
  });

  it('read for the sync against what was delivered, parses each item once and keeps the specs of the changed consumers only', async () => {
    const items = ['a', 'b', 'c', 'd'].map((id) => `  - { id: ${id}, login: app_${id}, secret: ${id}.secret }`);
    const text = `consumers:\n${items.join('\n')}\n`;
    writeFileSync(join(dir, 'cache.yaml'), text);
    const declared = (await declaredIn(provider(), text)).consumers;
    // b and d delivered as declared; a delivered with another spec; c never
    const delivered = new Map([
      ['cache/a', 'another-digest'],
      ['cache/b', specDigest(declared[1]!.desired)],
      ['cache/d', specDigest(declared[3]!.desired)],
    ]);
    const parsed = vi.spyOn(YamlSource, 'parseItem');
    try {
      const read = await readContributions(provider(), delivered);
      expect(parsed).toHaveBeenCalledTimes(items.length);
      expect(read.consumers.length).toBe(items.length);
      expect(await read.specs([2, 0])).toEqual([declared[2], declared[0]]);
      expect(parsed).toHaveBeenCalledTimes(items.length);
      // an unchanged consumer's spec is not kept: asking for it is the caller's mistake, said as such
      await expect(read.specs([1])).rejects.toThrow('no spec kept for item 1');
    } finally {
      parsed.mockRestore();
    }
  });

  it('finds each item where the whole document has it', () => {
    expect(itemSpans('consumers:\n  - id: a\n    login: b\n\n  - { id: c }\n')?.toArray()).toEqual([
      { start: 11, end: 35, line: 2 },
      { start: 35, end: 49, line: 5 },
    ]);
  });

  it('leaves any other shape to the whole document', () => {
    for (const text of [
      '',
      'consumers: []\n',
      'consumers:\n',
      '%YAML 1.2\n---\nconsumers:\n  - id: a\n',
      'consumers:\n  - id: a\nother: 1\n',
      'consumers:\n  - id: a\n---\nconsumers:\n  - id: b\n',
      'consumers:\n  - id: a\n - id: b\n',
      'consumers:\r\n  - id: a\r\n',
      'consumers:\n\t- id: a\n',
      'extra: 1\nconsumers:\n  - id: a\n',
    ]) {
      expect(itemSpans(text)).toBeUndefined();
    }
  });
});
