/**
 * Why the provider refuses one consumer of a contributions file, each problem as
 * `<file>:<line>: <field>: <reason>`: the spec check the worker runs again before every apply
 * (`src/policy/spec-check.ts`), and, for a grant secret that exists, where its symlinks lead.
 */
import { realpath } from 'node:fs/promises';
import type { ProviderConfig } from '../config/config.js';
import type { YamlSource } from '../config/yaml-source.js';
import { checkSpec, type SpecProblem } from '../policy/spec-check.js';
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

/** The problems of the consumer at `consumers[index]`; empty when it may be applied. */
export async function consumerProblems(source: YamlSource, provider: ProviderConfig, index: number, item: DeclaredItem, roots: SecretRoots): Promise<string[]> {
  const { problems } = checkSpec(provider, { id: item.id, login: item.login, values: item.values, secretPath: item.secretPath });
  const said = problems.map((problem) => describe(source, index, item, problem));
  if (!problems.some((p) => p.field === 'secret')) {
    const link = await symlinkOut(item.secretPath, roots);
    if (link) said.push(source.problem(['consumers', index, 'secret'], `${JSON.stringify(item.secret)} ${link}`));
  }
  return said;
}

function describe(source: YamlSource, index: number, item: DeclaredItem, problem: SpecProblem): string {
  switch (problem.field) {
    case 'login':
      return source.problem(['consumers', index, 'login'], problem.reason);
    case 'secret':
      return source.problem(['consumers', index, 'secret'], `${JSON.stringify(item.secret)} ${problem.reason}`);
    case 'values':
      return source.problem(['consumers', index, 'values', ...problem.path], problem.reason);
    case 'policy':
      // the adapter's sentence names its own field
      return `${source.at(['consumers', index])}: ${problem.reason}`;
  }
}

/** Why a grant secret that exists leads out of its provider's place by its symlinks; undefined when it does not (or does not exist yet). */
async function symlinkOut(path: string, realRoots: SecretRoots): Promise<string | undefined> {
  const real = await realpath(path).catch(() => undefined);
  const where = real === undefined ? undefined : misplaced(real, realRoots);
  return where ? `is a symlink to ${real}, ${misplacedInWords(where)}` : undefined;
}
