/**
 * Tests that run holdfast's code as another user (`nobody`: this suite runs as root, who reads
 * every file) cannot rely on the checkout: it may sit under a 0700 directory, node_modules with
 * it. So what that user runs is bundled, dependencies and all, into one world-readable file.
 */
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const repo = resolve(import.meta.dirname, '../..');

/**
 * Bundles `entry` (a file relative to the repository, or TypeScript source whose imports are
 * relative to the repository) into a fresh world-readable directory; returns the bundle's path.
 */
export async function bundleForAnyUser(entry: string | { source: string }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-as-any-user-'));
  chmodSync(dir, 0o755);
  const outfile = join(dir, 'bundle.mjs');
  await build({
    ...(typeof entry === 'string'
      ? { entryPoints: [join(repo, entry)] }
      : { stdin: { contents: entry.source, resolveDir: repo, sourcefile: 'as-any-user.ts', loader: 'ts' as const } }),
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // CommonJS dependencies call require(): give the bundle one
    banner: {
      js: "import { createRequire as holdfastRequire } from 'node:module'; const require = holdfastRequire(import.meta.url);",
    },
  });
  chmodSync(outfile, 0o644);
  return outfile;
}
