/**
 * The arrows run one way: contributions → desired-state sync → queue → worker → machine →
 * effects → adapter; the store serves the sync and the workers; the status and the CLI read.
 * Checked here on every import of every source file, not left to review.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports: a package name, or a path from the repository's root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers.map((s) => (s.startsWith('.') ? relative(root, resolve(root, dirname(file), s)) : s));
}

const all = [...sources('machines'), ...sources('workers'), ...sources('src')];

/** `file imports target` for every import of a file under `from` that `forbidden` matches. */
function violations(from: string, forbidden: (target: string) => boolean): string[] {
  return all
    .filter((file) => file.startsWith(`${from}/`))
    .flatMap((file) =>
      importsOf(file)
        .filter(forbidden)
        .map((target) => `${file} imports ${target}`),
    );
}

const under =
  (...dirs: string[]) =>
  (target: string) =>
    dirs.some((dir) => target === dir || target.startsWith(`${dir}/`));

describe('import rules', () => {
  it('finds the imports it checks', () => {
    expect(importsOf('workers/consumer-run.ts')).toEqual(
      expect.arrayContaining(['machines/machine-step.js', 'node:crypto']),
    );
    expect(all.length).toBeGreaterThan(40);
  });

  it('machines/ imports nothing but XState and its own files', () => {
    expect(violations('machines', (t) => t !== 'xstate' && !t.startsWith('machines/'))).toEqual([]);
  });

  it('adapters import neither the store nor the workers (nor the queue, the sync or the engine)', () => {
    expect(
      violations('src/adapters', under('src/store', 'workers', 'src/queue', 'src/desired', 'src/engine', 'src/resync')),
    ).toEqual([]);
  });

  it('the store imports no adapter, no worker, no queue', () => {
    expect(violations('src/store', under('src/adapters', 'workers', 'src/queue', 'src/engine'))).toEqual([]);
  });

  it('the configuration sits below everything that reads it', () => {
    expect(
      violations(
        'src/config',
        under('src/desired', 'src/store', 'src/queue', 'src/engine', 'src/resync', 'src/status', 'src/cli', 'workers'),
      ),
    ).toEqual([]);
  });

  it('only the composition root (src/engine) wires the workers into the rest', () => {
    const outside = all.filter((f) => f.startsWith('src/') && !f.startsWith('src/engine/'));
    const found = outside.flatMap((file) =>
      importsOf(file)
        .filter(under('workers'))
        .map((t) => `${file} imports ${t}`),
    );
    expect(found).toEqual([]);
  });

  it('the parts of coordination (locks, signals, notes) share only its tables, and the rest reaches them through coordination.ts', () => {
    const dir = 'src/queue/coordination';
    const parts = ['locks', 'signals', 'notes'].map((part) => `${dir}/${part}.js`);
    expect(violations(dir, (t) => parts.includes(t))).toEqual([]);
    const outside = all.filter((f) => !f.startsWith(`${dir}/`) && f !== 'src/queue/coordination.ts');
    expect(
      outside.flatMap((file) =>
        importsOf(file)
          .filter(under(dir))
          .map((t) => `${file} imports ${t}`),
      ),
    ).toEqual([]);
  });

  it('history sits below the HTTP surface and the command line that show it', () => {
    expect(violations('src/history', under('src/http', 'src/cli'))).toEqual([]);
  });

  it('workers know neither the sync, the status nor the command line', () => {
    expect(violations('workers', under('src/desired', 'src/status', 'src/cli', 'src/engine', 'src/resync'))).toEqual(
      [],
    );
  });
});
