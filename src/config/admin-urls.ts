/**
 * `admin.urls`: several hosts of one backend, for the adapters that take them
 * ({@link AdapterKind.adminUrls}: `postgres-roles`, a primary and its standbys, of which the
 * adapter writes to the one not in recovery):
 *
 * ```yaml
 * admin: { urls: [postgres://10.0.0.1:5432/postgres, postgres://10.0.0.2:5432/postgres],
 *          username: postgres, passwordFile: secrets/db-admin }
 * ```
 *
 * A provider gives `url` or `urls`, not both. The resolved `url` is the first listed (what
 * messages name); `urls` is kept only when given.
 */
import { z } from 'zod';
import type { AdapterKind } from '../adapters/adapter.js';
import { backendAddresses } from './backend-overlap.js';
import type { Option } from './option.js';
import type { ValueKinds } from './value-kinds.js';

/** Hosts one provider may list: a primary and its standbys. */
const MAX_URLS = 16;

/** The `urls` option of `admin`, its items checked as `url`'s (declared once: see `option.ts`). */
export const ADMIN_URLS_OPTION = {
  schema: (kinds: ValueKinds) =>
    z.array(kinds.url).min(1, 'list at least one host').max(MAX_URLS, `must list at most ${MAX_URLS} hosts`).optional(),
  doc: `\`postgres-roles\` only: a primary and its standbys (at most ${MAX_URLS}), instead of \`url\`; holdfast writes to the one not in recovery ([topologies](topologies.md#postgresql-a-primary-and-its-standbys))`,
} as const satisfies Option;

export interface AdminUrlFields {
  url?: string | undefined;
  urls?: string[] | undefined;
}

/** Problems of `url` and `urls`: one of them, `urls` only where the adapter takes it, no host twice. */
export function checkAdminUrls(admin: AdminUrlFields, adapter: AdapterKind | undefined, ctx: z.RefinementCtx): void {
  const problem = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: ['admin', field], message });
  if (admin.urls !== undefined && adapter !== undefined && adapter.adminUrls !== true)
    return problem('urls', `the ${adapter.kind} adapter takes one host: give url`);
  if (admin.url === undefined && admin.urls === undefined)
    return problem(
      'url',
      adapter?.adminUrls === true ? 'give url (one host) or urls (a primary and its standbys)' : 'give url',
    );
  if (admin.url !== undefined && admin.urls !== undefined)
    return problem('urls', 'give url (one host) or urls (several), not both');
  const seen = new Map<string, string>();
  for (const url of admin.urls ?? []) {
    const same = [url, ...backendAddresses(url)].map((a) => seen.get(a)).find((earlier) => earlier !== undefined);
    if (same !== undefined)
      problem(
        'urls',
        same === url ? `${url} is listed twice` : `${url} names the same server as ${same}, listed before it`,
      );
    for (const a of [url, ...backendAddresses(url)]) seen.set(a, url);
  }
}

/** The resolved admin target: the first host as `url`, and every host when `urls` was given. */
export function adminUrlsTarget(admin: AdminUrlFields): { url: string; urls?: string[] } {
  return admin.urls === undefined ? { url: admin.url! } : { url: admin.urls[0]!, urls: admin.urls };
}
