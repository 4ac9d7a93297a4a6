/**
 * Where a provider's grant secrets may be: inside one of its roots (the contributions file's
 * directory, its `secretsRoot`) and inside no root of another provider, so a directory that is a
 * root of two providers holds neither's grant secrets. One judgement, used where a secret's path
 * is loaded (as written, and where its symlinks lead) and where a secret is read (where the opened
 * file really is).
 */
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative } from 'node:path';

/** The fields that make a directory a root of a provider's grant secrets. */
export type SecretRootField = 'contributions' | 'secretsRoot';

/** A directory where another provider's grant secrets may be. */
export interface ForeignSecretRoot {
  provider: string;
  field: SecretRootField;
  /** Absolute. */
  path: string;
}

/** What a provider's configuration says of its grant secrets' roots (`ProviderConfig` holds these fields). */
export interface ProviderSecretRoots {
  /** Absolute path of the contributions file. */
  contributionsPath: string;
  /** Absolute directory grant secrets may be in besides the contributions file's own; undefined: only the latter. */
  secretsRoot?: string | undefined;
  /** The grant-secret roots of every other provider (filled in by `loadConfig`). */
  foreignSecretRoots: readonly ForeignSecretRoot[];
}

/** One root: a directory, and which field of its provider makes it one. */
export interface SecretRoot {
  field: SecretRootField;
  path: string;
}

/** A provider's roots, and every other provider's. */
export interface SecretRoots {
  own: readonly SecretRoot[];
  foreign: readonly ForeignSecretRoot[];
}

/** Why a path is not a place for the provider's grant secrets. */
export type Misplaced = { kind: 'outside'; outside: string } | { kind: 'foreign'; foreign: ForeignSecretRoot };

/** The roots a provider's fields make: its contributions file's directory, then its `secretsRoot`. */
export function rootsOfFields(provider: Pick<ProviderSecretRoots, 'contributionsPath' | 'secretsRoot'>): SecretRoot[] {
  const roots: SecretRoot[] = [{ field: 'contributions', path: dirname(provider.contributionsPath) }];
  if (provider.secretsRoot !== undefined) roots.push({ field: 'secretsRoot', path: provider.secretsRoot });
  return roots;
}

/** `provider`'s grant-secret roots, and the other providers' (filled in by `loadConfig`). */
export function secretRootsOf(
  provider: Pick<ProviderSecretRoots, 'contributionsPath' | 'secretsRoot' | 'foreignSecretRoots'>,
): SecretRoots {
  return { own: rootsOfFields(provider), foreign: provider.foreignSecretRoots };
}

/** Whether `path` is strictly inside the directory `root`. */
export function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** Why `path` is no place for a grant secret of the provider `roots` belong to; undefined when it is one. */
export function misplaced(path: string, roots: SecretRoots): Misplaced | undefined {
  const foreign = roots.foreign.find((root) => inside(path, root.path));
  if (foreign) return { kind: 'foreign', foreign };
  return roots.own.some((root) => inside(path, root.path))
    ? undefined
    : { kind: 'outside', outside: ownRootsInWords(roots.own) };
}

/** Where a provider's own grant secrets may be, in words. */
export function ownRootsInWords(own: readonly SecretRoot[]): string {
  const extra = own.filter((root) => root.field === 'secretsRoot').map((root) => root.path);
  return extra.length > 0
    ? `the contributions file's directory or the provider's secretsRoot (${extra.join(', ')})`
    : "the contributions file's directory (give the provider a secretsRoot to allow another)";
}

/** `where` in words: "outside …", or "in provider X's secretsRoot (…), …". */
export function misplacedInWords(where: Misplaced): string {
  if (where.kind === 'outside') return `outside ${where.outside}`;
  const { provider, field, path } = where.foreign;
  const what = field === 'secretsRoot' ? 'secretsRoot' : "contributions file's directory";
  return `in ${path}, provider ${provider}'s ${what}: no grant secret of one provider may be in another's directory`;
}

/**
 * `roots` with every directory resolved to where its symlinks lead (a directory that does not exist yet, as written).
 */
export async function resolveRoots(
  roots: SecretRoots,
  resolve: (path: string) => Promise<string> = realOrAsWritten,
): Promise<SecretRoots> {
  const [own, foreign] = await Promise.all([
    Promise.all(roots.own.map(async (root) => ({ ...root, path: await resolve(root.path) }))),
    Promise.all(roots.foreign.map(async (root) => ({ ...root, path: await resolve(root.path) }))),
  ]);
  return { own, foreign };
}

async function realOrAsWritten(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}
