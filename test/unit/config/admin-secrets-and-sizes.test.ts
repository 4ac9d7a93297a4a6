/**
 * Configuration bounds: admin secrets shorter than 8 characters are refused at load (the scrubber
 * could not remove them from logs), sizes are read with units, and at most 100 problems are
 * listed for a configuration file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AdapterKind } from '../../../src/adapters/adapter.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { formatSize, parseSize } from '../../../src/text/size.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';

const fakeKind: AdapterKind = {
  kind: 'fake',
  valuesSchema: z.unknown(),
  policySchema: z.unknown(),
  violations: () => [],
  connect: () => {
    throw new Error('no backends in unit tests');
  },
};
const adapters: ReadonlyMap<string, AdapterKind> = new Map([['fake', fakeKind]]);

let dir: string;
let configPath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-config-bounds-'));
  configPath = join(dir, 'holdfast.yaml');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(relative: string, content: string): void {
  const path = join(dir, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

const config = (more = '', admin = '') => `queue:
  url: redis://127.0.0.1:6379
  passwordFile: secrets/queue
store:
  url: mongodb://127.0.0.1:27017
  username: admin
  passwordFile: secrets/store
http:
  passwordFile: secrets/dashboard
${more}providers:
  - name: cache
    adapter: fake
    admin: { url: "redis://127.0.0.1:6380", passwordFile: secrets/cache }
    contributions: contributions/cache.yaml
${admin}`;

async function problems(yaml: string): Promise<string[]> {
  writeFileSync(configPath, yaml);
  const error: unknown = await loadConfig(configPath, { adapters, environment: { stdoutIsTTY: false } }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(HoldfastError);
  expect((error as HoldfastError).code).toBe('CONFIG_INVALID');
  return (error as HoldfastError).message
    .split('\n')
    .slice(1)
    .map((l) => l.trim());
}

describe('admin secrets', () => {
  it('refuses every admin password shorter than 8 characters (queue, store, provider admin, dashboard), naming the file, never the secret', async () => {
    write('secrets/queue', 'Qq-shrt\n');
    write('secrets/store', 'Se7en77');
    write('secrets/cache', 'Ab3\n');
    write('secrets/dashboard', 'Dz9!');
    const found = await problems(config());
    const refusal = (field: string, file: string): unknown =>
      expect.stringMatching(
        new RegExp(
          `: ${field.replace(/[.[\]]/g, '\\$&')}: ${join(dir, file)} holds a password shorter than 8 characters; use a longer one`,
        ),
      );
    expect(found).toEqual(
      expect.arrayContaining([
        refusal('queue.passwordFile', 'secrets/queue'),
        refusal('store.passwordFile', 'secrets/store'),
        refusal('http.passwordFile', 'secrets/dashboard'),
        refusal('providers[0].admin.passwordFile', 'secrets/cache'),
      ]),
    );
    expect(found).toHaveLength(4);
    for (const secret of ['Qq-shrt', 'Se7en77', 'Ab3', 'Dz9!']) expect(found.join('\n')).not.toContain(secret);
  });

  it('accepts admin passwords of 8 characters or more', async () => {
    for (const name of ['queue', 'store', 'cache']) write(`secrets/${name}`, `${name}-admin-pw\n`);
    write('secrets/dashboard', '8-chars!\n');
    writeFileSync(configPath, config());
    const loaded = await loadConfig(configPath, { adapters, environment: { stdoutIsTTY: false } });
    expect(loaded.http.auth?.password).toBe('8-chars!');
    expect(loaded.providers[0]!.admin.password).toBe('cache-admin-pw');
  });
});

describe('sizes', () => {
  it('reads bytes and units, and writes them for people', () => {
    expect(parseSize('64MiB')).toBe(64 * 1024 * 1024);
    expect(parseSize('512 KiB')).toBe(512 * 1024);
    expect(parseSize('1GiB')).toBe(1024 ** 3);
    expect(parseSize('100MB')).toBe(100_000_000);
    expect(parseSize('10kB')).toBe(10_000);
    expect(parseSize('4096')).toBe(4096);
    expect(() => parseSize('lots')).toThrow(
      'expected a size such as 64MiB, 512KiB, 1GiB, 100MB or a number of bytes; got "lots"',
    );
    expect(formatSize(68_157_440)).toBe('65 MiB (68,157,440 bytes)');
    expect(formatSize(1536)).toBe('1.5 KiB (1,536 bytes)');
    expect(formatSize(900)).toBe('900 bytes');
  });

  it('takes sync.contributionsMaxBytes as a size, onto every provider', async () => {
    for (const name of ['queue', 'store', 'cache', 'dashboard']) write(`secrets/${name}`, 'long-enough-pw');
    writeFileSync(configPath, config('sync: { contributionsMaxBytes: 8MiB }\n'));
    const loaded = await loadConfig(configPath, { adapters, environment: { stdoutIsTTY: false } });
    expect(loaded.sync.contributionsMaxBytes).toBe(8 * 1024 * 1024);
    expect(loaded.providers[0]!.contributionsMaxBytes).toBe(8 * 1024 * 1024);
    expect(await problems(config('sync: { contributionsMaxBytes: lots }\n'))).toEqual([
      `${configPath}:10: sync.contributionsMaxBytes: expected a size such as 64MiB, 512KiB, 1GiB, 100MB or a number of bytes; got "lots"`,
    ]);
  });
});

describe('problems of a configuration file', () => {
  it('lists at most 100, then counts the rest', async () => {
    for (const name of ['queue', 'store', 'cache', 'dashboard']) write(`secrets/${name}`, 'long-enough-pw');
    const unknown = Array.from({ length: 250 }, (_, i) => `    field${i}: 1\n`).join('');
    const found = await problems(config('', unknown));
    expect(found).toHaveLength(101);
    expect(found[0]).toBe(`${configPath}:15: providers[0].field0: unknown field`);
    expect(found[100]).toBe('… and 150 more');
  });
});
