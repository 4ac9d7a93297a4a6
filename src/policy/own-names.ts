/**
 * holdfast's own names, withheld from every consumer of a provider on holdfast's own server
 * (`sharesHoldfastServer`, `src/config/own-servers.ts`): a key or channel pattern that could
 * match one name holdfast keeps there (any name both patterns match, not only an equal text:
 * `*`, `h*` and `[h]oldfast:*` all reach `holdfast:…`), or a database that is the store's (in
 * any case: MongoDB refuses two databases differing only in case), is refused. Part of the one
 * spec check (`spec-check.ts`), so the worker refuses it too, whatever reached the queue.
 */
import type { AddressedNames, AdapterKind } from '../adapters/adapter.js';
import type { OwnNames } from '../config/config.js';
import { firstMet } from '../config/glob-overlap.js';

/** One sentence per name the consumer's values address among holdfast's own; empty when none. */
export function ownNameProblems(
  adapter: Pick<AdapterKind, 'addressed'>,
  own: OwnNames | undefined,
  values: unknown,
): string[] {
  if (own === undefined || adapter.addressed === undefined) return [];
  const asked: AddressedNames = adapter.addressed(values);
  const problems: string[] = [];
  const patterns = (field: 'keys' | 'channels') =>
    (asked[field] ?? []).forEach((pattern, i) => {
      const theirs = firstMet(pattern, own[field]);
      if (theirs === undefined) return;
      problems.push(
        `values.${field}[${i}]: ${JSON.stringify(pattern)} can name holdfast's own ${field} (${JSON.stringify(theirs)}) on ${own.server}, which this provider shares: ` +
          `no consumer may reach them; ask for ${field} that cannot start like holdfast's`,
      );
    });
  patterns('keys');
  patterns('channels');
  const stores = own.databases.map((d) => d.toLowerCase());
  for (const database of asked.databases ?? []) {
    if (!stores.includes(database.toLowerCase())) continue;
    problems.push(
      `values.database: ${JSON.stringify(database)} is holdfast's own record store database on ${own.server}, which this provider shares: no consumer's user is made there`,
    );
  }
  return problems;
}
