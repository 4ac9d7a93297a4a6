/**
 * The arrows run one way: down the layers below. Every folder of `machines/`, `workers/` and
 * `src/` has its layer; a file imports its own folder's files and the folders of lower layers,
 * never a folder of its own layer or a higher one, and no chain of imports comes back to where it
 * started (type-only imports count: a cycle of types is a cycle a reader has to untie).
 * Checked here on every import of every source file, read by TypeScript's own scanner, not left
 * to review.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

/**
 * The layers, lowest first. A folder may import the folders of the layers before its own; the
 * folders of one layer know nothing of one another.
 */
const LAYERS: readonly (readonly string[])[] = [
  // the text every layer shares, then the pure chart and the leaves everything shares
  ['src/text'],
  ['machines', 'src/errors', 'src/logging'],
  ['src/secrets'],
  ['src/adapters'],
  ['src/config'],
  ['src/policy', 'src/store'],
  // the queue's Redis: connections, coordination, seals, shards
  ['src/queue'],
  // the schedule: the jobs, the due set of every consumer's wait, the rounds
  ['src/schedule'],
  // what reads and writes the records and the queue
  ['src/desired', 'src/history', 'src/metrics', 'src/old-connections', 'src/orphans', 'src/sweep'],
  // what a BullMQ worker runs; the read-only reports
  ['workers', 'src/doctor', 'src/plan', 'src/status'],
  ['src/http'],
  // the composition root, then the command line
  ['src/engine'],
  ['src/cli'],
];

const ROOTS = ['machines', 'workers', 'src'];

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports (type-only, re-exports and `import()` included): a package name, or a path from the repository's root. */
function importsOf(file: string): string[] {
  let found = read.get(file);
  if (found === undefined) {
    const text = readFileSync(join(root, file), 'utf8');
    found = ts
      .preProcessFile(text, true, true)
      .importedFiles.map(({ fileName }) =>
        fileName.startsWith('.') ? relative(root, resolve(root, dirname(file), fileName)) : fileName,
      );
    read.set(file, found);
  }
  return found;
}
const read = new Map<string, string[]>();

/** `src/queue/x.js` → `src/queue/x.ts`: the source file an import names. */
const sourceOf = (target: string): string => target.replace(/\.js$/, '.ts');

const all = ROOTS.flatMap(sources);

/** The folder a file's layer is declared for: `machines`, `workers`, or `src/<folder>`; undefined outside them. */
function folderOf(path: string): string | undefined {
  const parts = path.split('/');
  if (parts[0] === 'machines' || parts[0] === 'workers') return parts[0];
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : undefined;
}

const layerOf = new Map(LAYERS.flatMap((folders, layer) => folders.map((folder) => [folder, layer] as const)));

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

/** A folder's layer, or `?` for a folder without one (which the coverage test names). */
const layerName = (folder: string | undefined): string => String(layerOf.get(folder ?? '') ?? '?');

/** The imports that run up the layers, or across one: `file imports target (layer a → b)`. */
function upwardImports(files: readonly string[]): string[] {
  return files.flatMap((file) => {
    const from = folderOf(file);
    return importsOf(file)
      .filter((target) => ROOTS.some((dir) => target.startsWith(`${dir}/`)))
      .filter((target) => {
        const to = folderOf(target);
        if (to === from && to !== undefined) return false;
        const [up, down] = [layerOf.get(from ?? ''), layerOf.get(to ?? '')];
        return up === undefined || down === undefined || down >= up;
      })
      .map((target) => `${file} imports ${target} (layer ${layerName(from)} → ${layerName(folderOf(target))})`);
  });
}

/** Every cycle of imports among `files` (Tarjan's strongly connected components), each as its files. */
function importCycles(files: readonly string[]): string[][] {
  const known = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .map(sourceOf)
        .filter((t) => known.has(t)),
    ]),
  );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of edges.get(file)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component = stack.splice(stack.indexOf(file));
    if (component.length > 1 || edges.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}

describe('import rules', () => {
  it('finds the imports it checks, type-only ones included', () => {
    expect(importsOf('workers/consumer-run.ts')).toContain('machines/machine-step.js');
    expect(importsOf('workers/lock-token.ts')).toContain('node:crypto');
    // `import type { DueWaits, … }` only
    expect(importsOf('workers/due-rounds.ts')).toContain('src/schedule/due-waits.js');
    expect(all.length).toBeGreaterThan(40);
  });

  it('every folder of machines/, workers/ and src/ has its layer, and every layer its folder', () => {
    const folders = new Set(all.map((file) => folderOf(file) ?? `${file} (outside any folder)`));
    expect([...folders].sort()).toEqual([...layerOf.keys()].sort());
  });

  it('no import runs back up the layers, nor across one', () => {
    expect(upwardImports(all)).toEqual([]);
  });

  it('no import cycle, type-only imports included', () => {
    expect(importCycles(all)).toEqual([]);
  });

  it('machines/ imports nothing but XState and its own files', () => {
    expect(violations('machines', (t) => t !== 'xstate' && !t.startsWith('machines/'))).toEqual([]);
  });

  it('the store imports no adapter (the layers allow it; the store holds no driver of a backend)', () => {
    expect(violations('src/store', under('src/adapters'))).toEqual([]);
  });

  it('workers know nothing of the sync (the layers allow it; a worker acts on what the queue brings)', () => {
    expect(violations('workers', under('src/desired'))).toEqual([]);
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
});
