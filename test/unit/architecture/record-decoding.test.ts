/**
 * The record is decoded once, at the store's edge: only `src/store/record-codec.ts` migrates a
 * stored machine (with the machine's own `readPersisted`) or names its version, and only the
 * store encodes the keys the wire server refuses. Everything else works with decoded records.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const product = [...sources('machines'), ...sources('workers'), ...sources('src')];

/** The product files that mention `word`, but for those allowed to. */
function mentions(word: RegExp, allowed: readonly string[]): string[] {
  return product.filter((file) => !allowed.includes(file) && word.test(readFileSync(join(root, file), 'utf8')));
}

describe('the record decoded once', () => {
  it('finds the files it checks', () => {
    expect(product).toEqual(
      expect.arrayContaining(['src/store/record-codec.ts', 'machines/machine-step.ts', 'workers/consumer-job.ts']),
    );
  });

  it('only the record codec migrates a stored machine or names its version', () => {
    expect(
      mentions(/\breadPersisted\b|\bMACHINE_VERSION\b/, ['machines/machine-step.ts', 'src/store/record-codec.ts']),
    ).toEqual([]);
  });

  it('only the store encodes and decodes the keys of stored documents', () => {
    expect(mentions(/\b(?:encodeKeys|decodeKeys)\b/, ['src/store/key-codec.ts', 'src/store/record-codec.ts'])).toEqual(
      [],
    );
  });
});
