/**
 * A contributions file is bounded: larger than `contributionsMaxBytes` (or not a regular file)
 * it is refused unread, with its size; at most 100 of its problems are listed, then a count of
 * the rest; an item that is not a mapping is named as such.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { loadContributions } from '../../../src/desired/load-contributions.js';
import { providerConfig } from '../../support/provider-config.js';

const fakeKind: AdapterKind = {
  kind: 'fake',
  valuesSchema: z.strictObject({ keys: z.array(z.string()).default([]) }),
  policySchema: z.unknown(),
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-bounds-'));
  file = join(dir, 'cache.yaml');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function provider(more: Partial<ProviderConfig> = {}): ProviderConfig {
  return providerConfig({ adapter: fakeKind, contributionsPath: file, ...more });
}

/** The message a person reads when the file is refused. */
async function refusal(more: Partial<ProviderConfig> = {}): Promise<string> {
  const error: unknown = await loadContributions(provider(more)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  expect((error as HoldfastError).code).toBe('CONTRIBUTIONS_INVALID');
  return (error as HoldfastError).message;
}

const consumer = (i: number) => `  - id: c${i}\n    login: app_c${i}\n    secret: grants/c${i}\n`;

describe('contributions bounds', () => {
  it('refuses a file larger than contributionsMaxBytes unread, naming its size and the setting', async () => {
    const head = `consumers:\n${consumer(1)}# `;
    writeFileSync(file, `${head}${'x'.repeat(3072 - head.length - 1)}\n`);
    const message = await refusal({ contributionsMaxBytes: 1024 });
    expect(message).toBe(
      `invalid contributions ${file} (1 problem):\n  ${file}: the file is 3 KiB (3,072 bytes), more than sync.contributionsMaxBytes (1 KiB (1,024 bytes)); refused unread`,
    );
    // the same file under the bound is read
    expect((await loadContributions(provider({ contributionsMaxBytes: 4096 }))).consumers.map((c) => c.id)).toEqual([
      'c1',
    ]);
  });

  it('refuses a FIFO as a contributions file without waiting for a writer', async () => {
    execFileSync('mkfifo', [file]);
    expect(await refusal()).toContain(`${file}: not a regular file; refused unread`);
  });

  it('lists at most 100 problems, then counts the rest', async () => {
    const items = Array.from(
      { length: 2445 },
      (_, i) => `  - id: c${i}\n    login: bad login ${i}\n    secret: grants/c${i}\n`,
    );
    writeFileSync(file, `consumers:\n${items.join('')}`);
    const [headline, ...lines] = (await refusal()).split('\n');
    expect(headline).toBe(`invalid contributions ${file} (2,445 problems):`);
    expect(lines).toHaveLength(101);
    expect(lines[0]).toBe(
      `  ${file}:3: consumers[0].login: must be 1 to 128 letters, digits, _ . or -, starting with a letter or digit`,
    );
    expect(lines[99]).toContain('consumers[99].login');
    expect(lines[100]).toBe('  … and 2,345 more');
  });

  it('names an item that is a list, or a scalar, rather than checking its fields', async () => {
    writeFileSync(
      file,
      `consumers:\n${consumer(0)}${consumer(1)}${consumer(2)}  - - id: x\n      login: app_x\n      secret: grants/x\n  - photos\n`,
    );
    const [, ...lines] = (await refusal()).split('\n');
    expect(lines.map((l) => l.trim())).toEqual([
      `${file}:11: consumers[3]: expected a mapping with id, login, secret; got a list`,
      `${file}:14: consumers[4]: expected a mapping with id, login, secret; got a string`,
    ]);
  });
});
