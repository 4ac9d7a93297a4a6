/**
 * Providers' grant-secret roots kept apart. A `secretsRoot` that is, contains or lies inside a
 * root of another provider (its contributions file's directory, its `secretsRoot`) is refused at
 * load: one provider's consumers could name the other's grant secrets, and a PostgreSQL password
 * would end up hashed in a Redis ACL. Each provider gets the other providers' roots, which the
 * loader and the reader of grant secrets refuse (a shared contributions directory holds no secret).
 */
import { realpath } from 'node:fs/promises';
import type { ForeignSecretRoot } from '../secrets/secret-roots.js';
import type { YamlSource } from './yaml-source.js';
import { inside, rootsOfFields, type SecretRoot } from '../secrets/secret-roots.js';

/** What the configuration says of a provider's roots. */
export interface ProviderRootFields {
  name: string;
  /** Absolute path of its contributions file. */
  contributions: string;
  /** Absolute. */
  secretsRoot?: string | undefined;
}

function rootsOf(provider: ProviderRootFields): SecretRoot[] {
  return rootsOfFields({ contributionsPath: provider.contributions, secretsRoot: provider.secretsRoot });
}

/** The roots of every provider but `providers[index]`. */
export function foreignSecretRoots(providers: readonly ProviderRootFields[], index: number): ForeignSecretRoot[] {
  return providers.flatMap((other, j) =>
    j === index ? [] : rootsOf(other).map((root) => ({ provider: other.name, ...root })),
  );
}

const WHAT = { contributions: "contributions file's directory", secretsRoot: 'secretsRoot' } as const;

/** How `mine` stands to `theirs`, in words; undefined when apart. */
function relation(mine: string, theirs: string): string | undefined {
  if (mine === theirs) return 'is also';
  if (inside(mine, theirs)) return 'lies inside';
  if (inside(theirs, mine)) return 'contains';
  return undefined;
}

/**
 * One problem (`<file>:<line>: providers[i].secretsRoot: …`) for each `secretsRoot` that overlaps another provider's
 * root.
 */
export async function secretRootOverlaps(
  source: YamlSource,
  providers: readonly ProviderRootFields[],
): Promise<string[]> {
  const real = async (path: string) => realpath(path).catch(() => path);
  const resolved = await Promise.all(
    providers.map((p) => Promise.all(rootsOf(p).map(async (root) => ({ ...root, real: await real(root.path) })))),
  );
  const problems: string[] = [];
  for (const [i, mine] of providers.entries()) {
    const own = resolved[i]!.find((root) => root.field === 'secretsRoot');
    if (!own) continue;
    for (const [j, other] of providers.entries()) {
      // two secretsRoots are compared once, at the later provider's
      for (const theirs of resolved[j]!.filter((root) => j !== i && !(root.field === 'secretsRoot' && j > i))) {
        const how = relation(own.path, theirs.path) ?? relation(own.real, theirs.real);
        if (how === undefined) continue;
        problems.push(
          source.problem(
            ['providers', i, 'secretsRoot'],
            `provider ${mine.name}'s secretsRoot ${own.path} ${how} provider ${other.name}'s ${WHAT[theirs.field]} (${theirs.path}): ` +
              `one provider's consumers could name the other's grant secrets; give each provider a directory of its own`,
          ),
        );
      }
    }
  }
  return problems;
}
