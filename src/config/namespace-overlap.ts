/**
 * One backend, one owner per name: two providers on the same server (as `backend-overlap.ts`
 * judges it) must give their consumers disjoint names (Redis keys and channels, S3 buckets),
 * or a consumer id declared on both (two teams' `photos`) would read and overwrite one
 * another's data. Each template's text before `{id}`/`{login}` must not be the start of the
 * other's (`src/adapters/name-templates.ts`), and neither may give every name (`allowAllKeys`). Refused at
 * config load, naming both providers.
 */
import type { AdapterKind, PolicyNamespace } from '../adapters/adapter.js';
import { sharedBackends, type ProviderAddress } from './backend-overlap.js';
import { leadsOverlap, templateShape } from '../adapters/name-templates.js';
import type { YamlSource } from './yaml-source.js';

/** What the check needs of a provider, as the configuration gives it. */
export interface NamespaceOwner {
  name: string;
  /** Every host of `admin.urls` counts as the provider's backend, as in `backend-overlap.ts`. */
  admin: ProviderAddress['admin'];
  adapter: Pick<AdapterKind, 'kind' | 'namespaces'>;
}

/**
 * Why two providers on one backend may not both be configured, naming both; `[]` when none. `policies` are the
 * validated ones, by index.
 */
export function namespaceOverlaps(
  source: YamlSource,
  providers: readonly NamespaceOwner[],
  policies: ReadonlyMap<number, unknown>,
): string[] {
  const problems: string[] = [];
  const namespaces = providers.map((p, index) =>
    policies.has(index) ? (p.adapter.namespaces?.(policies.get(index)) ?? []) : [],
  );
  for (const { i, j, shared } of sharedBackends(providers)) {
    const [earlier, later] = [providers[i]!, providers[j]!];
    if (earlier.adapter.kind !== later.adapter.kind) continue;
    for (const mine of namespaces[j]!) {
      const theirs = namespaces[i]!.find((n) => n.noun === mine.noun);
      if (theirs === undefined || !leadsOverlap(mine.template, theirs.template)) continue;
      const pathOf = (index: number, n: PolicyNamespace) => [
        'providers',
        index,
        'policy',
        n.template === undefined ? (n.allField ?? n.field) : n.field,
      ];
      const said = (name: string, n: PolicyNamespace) =>
        `provider ${name} (${n.template === undefined ? `${n.allField ?? n.field}: true` : `${n.field} "${n.template}"`}`;
      // said where the later provider gives every name, else at its template
      const [at, index, other, otherIndex, otherN, n] =
        mine.template === undefined || theirs.template !== undefined
          ? [later, j, earlier, i, theirs, mine]
          : [earlier, i, later, j, mine, theirs];
      problems.push(
        source.problem(
          pathOf(index, n),
          `the ${mine.noun} of ${said(at.name, n)}) and of ${said(other.name, otherN)}, ${source.at(pathOf(otherIndex, otherN))}) can be the same: both providers are on one backend (${shared}), ` +
            `so a consumer id declared on both would share its ${mine.noun}; give each provider a ${mine.field}${allowAll(mine, theirs)} whose text before {id} is its own, neither the start of the other's, ` +
            `e.g. ${example(later.name, mine)} and ${example(earlier.name, theirs)}`,
        ),
      );
    }
  }
  return problems;
}

/** ` (not allowAllKeys)` when one of the two gives every name. */
function allowAll(...both: PolicyNamespace[]): string {
  const all = both.find((n) => n.template === undefined);
  return all?.allField === undefined ? '' : ` (not ${all.allField})`;
}

/** A template for `name` that starts with the provider's name, e.g. `sessions:{id}:`. */
function example(name: string, n: PolicyNamespace): string {
  const shape = n.template === undefined ? undefined : templateShape(n.template);
  const separator = shape && !('problem' in shape) ? shape.separator : ':';
  return `"${name}${separator}${n.template ?? `{id}${separator}`}"`;
}
