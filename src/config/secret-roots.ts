/**
 * Where a provider's grant secrets may be: the contributions file's directory (or below) and,
 * when set, the provider's `secretsRoot`. The one definition of it, for the contributions
 * loader, the worker's check before an apply and every read of a grant secret.
 */
import { dirname, isAbsolute, relative, sep } from 'node:path';
import type { ProviderConfig } from './config.js';

/** The directories `provider`'s grant secrets may be under, absolute; the contributions file's first. */
export function secretRoots(provider: Pick<ProviderConfig, 'contributionsPath' | 'secretsRoot'>): string[] {
  return [dirname(provider.contributionsPath), ...(provider.secretsRoot === undefined ? [] : [provider.secretsRoot])];
}

/** Whether the absolute `path` lies strictly under `root` (lexically: `..` resolved, symlinks not followed). */
export function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** The roots in words, for a refusal: `the contributions file's directory or the provider's secretsRoot (/run/grants)`. */
export function describeRoots(roots: readonly string[]): string {
  return roots.length > 1
    ? `the contributions file's directory or the provider's secretsRoot (${roots.slice(1).join(', ')})`
    : "the contributions file's directory (give the provider a secretsRoot to allow another)";
}
