/**
 * `admin.maxConcurrentCalls`: optional, reaches the adapter's admin connection, refused when not a small positive
 * integer.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { isHoldfastError } from '../../../src/errors/holdfast-error.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-cap-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = (admin: string) => `queue: { url: redis://127.0.0.1:6379 }
store: { url: mongodb://127.0.0.1:27017 }
providers:
  - name: ledger
    adapter: postgres-roles
    admin: { url: postgres://127.0.0.1:5432/postgres${admin} }
    contributions: ledger.yaml
    policy: { allowedDatabases: [app] }
`;

async function load(admin: string) {
  const path = join(dir, 'holdfast.yaml');
  writeFileSync(path, config(admin));
  return loadConfig(path, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
}

describe('admin.maxConcurrentCalls', () => {
  it('is absent by default (the adapter then uses 4) and passed on when given', async () => {
    expect((await load('')).providers[0]?.admin.maxConcurrentCalls).toBeUndefined();
    expect((await load(', maxConcurrentCalls: 8')).providers[0]?.admin.maxConcurrentCalls).toBe(8);
    expect((await load('')).providers[0]?.policy).toEqual({
      allowedDatabases: ['app'],
      allowedSchemas: [],
      allowedRoles: [],
      withheldRoles: [],
      connectionLimit: 10,
    });
  });

  it.each([
    ['0', 'Too small'],
    ['2.5', 'expected int'],
    ['100', 'must be at most 64'],
  ])('refuses %s, naming the field', async (value, words) => {
    const error = await load(`, maxConcurrentCalls: ${value}`).catch((e: unknown) => e);
    expect(isHoldfastError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('providers[0].admin.maxConcurrentCalls');
    expect((error as Error).message).toContain(words);
  });
});
