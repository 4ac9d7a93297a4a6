/**
 * Why the provider refuses one consumer of a contributions file, each problem as
 * `<file>:<line>: <field>: <reason>`: the spec check the worker runs again before every apply
 * (`src/policy/spec-check.ts`), and, for a grant secret that exists, where its symlinks lead.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ProviderConfig } from '../config/config.js';
import type { YamlSource } from '../config/yaml-source.js';
import { checkSpec, quotedShort, type SpecProblem } from '../policy/spec-check.js';
import { misplaced, misplacedInWords, resolveRoots, secretRootsOf, type SecretRoots } from '../secrets/secret-roots.js';

/** A consumer as its file declares it; `secret` as written, `secretPath` resolved. */
export interface DeclaredItem {
  id: string;
  login: string;
  secret: string;
  secretPath: string;
  values: unknown;
}

/** Where the provider's secret roots (its own and the other providers') really are: resolved once per file. */
export function rootsOf(provider: ProviderConfig): Promise<SecretRoots> {
  return resolveRoots(secretRootsOf(provider));
}

/**
 * What one directory holds, read once: each name, and whether it is a symlink (undefined: the listing does not say).
 */
type Listing = Map<string, boolean | undefined>;

/**
 * Where paths really lead (`realpath`), for one read of a file: each directory listed and
 * resolved once, so that 100k grant secrets in one directory cost two calls, not 100k (a
 * symlink among them: its own `realpath`).
 */
export class RealPaths {
  private readonly dirs = new Map<string, Promise<{ real: string; listing: Listing } | undefined>>();

  /** The real path of the absolute, normalized `path`; undefined when it does not exist (or cannot be resolved). */
  async of(path: string): Promise<string | undefined> {
    const dir = dirname(path);
    let read = this.dirs.get(dir);
    if (read === undefined) this.dirs.set(dir, (read = listed(dir)));
    const found = await read;
    const name = basename(path);
    if (found === undefined || !found.listing.has(name)) return undefined;
    const link =
      found.listing.get(name) ??
      (await lstat(path).then(
        (s) => s.isSymbolicLink(),
        () => undefined,
      ));
    if (link === undefined) return undefined;
    return link ? realpath(path).catch(() => undefined) : join(found.real, name);
  }
}

async function listed(dir: string): Promise<{ real: string; listing: Listing } | undefined> {
  try {
    const [real, entries] = await Promise.all([realpath(dir), readdir(dir, { withFileTypes: true })]);
    const known = (e: Dirent) =>
      e.isFile() ||
      e.isDirectory() ||
      e.isSymbolicLink() ||
      e.isFIFO() ||
      e.isSocket() ||
      e.isBlockDevice() ||
      e.isCharacterDevice();
    return { real, listing: new Map(entries.map((e) => [e.name, known(e) ? e.isSymbolicLink() : undefined])) };
  } catch {
    return undefined;
  }
}

/** The problems of the consumer at `consumers[index]`; empty when it may be applied. */
export async function consumerProblems(
  source: YamlSource,
  provider: ProviderConfig,
  index: number,
  item: DeclaredItem,
  roots: SecretRoots,
  paths: RealPaths = new RealPaths(),
): Promise<string[]> {
  const { problems } = checkSpec(provider, {
    id: item.id,
    login: item.login,
    values: item.values,
    secretPath: item.secretPath,
  });
  const said = problems.map((problem) => describe(source, index, item, problem));
  if (!problems.some((p) => p.field === 'secret')) {
    const link = await symlinkOut(item.secretPath, roots, paths);
    if (link) said.push(source.problem(['consumers', index, 'secret'], `${JSON.stringify(item.secret)} ${link}`));
  }
  return said;
}

function describe(source: YamlSource, index: number, item: DeclaredItem, problem: SpecProblem): string {
  switch (problem.field) {
    case 'id':
      return source.problem(['consumers', index, 'id'], problem.reason);
    case 'login':
      return source.problem(['consumers', index, 'login'], problem.reason);
    case 'secret':
      return source.problem(['consumers', index, 'secret'], `${quotedShort(item.secret)} ${problem.reason}`);
    case 'values':
      return source.problem(['consumers', index, 'values', ...problem.path], problem.reason);
    case 'policy':
      // the adapter's sentence names its own field
      return `${source.at(['consumers', index])}: ${problem.reason}`;
  }
}

/**
 * Why a grant secret that exists leads out of its provider's place by its symlinks; undefined when it does not (or does
 * not exist yet).
 */
async function symlinkOut(path: string, realRoots: SecretRoots, paths: RealPaths): Promise<string | undefined> {
  const real = await paths.of(path);
  const where = real === undefined ? undefined : misplaced(real, realRoots);
  return where ? `is a symlink to ${real}, ${misplacedInWords(where)}` : undefined;
}
