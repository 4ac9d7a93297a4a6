/**
 * The admin forms of a backend of several nodes (adapters with `nodeForms`, i.e. `redis-acl`):
 *
 * ```yaml
 * admin: { url: redis://10.0.0.1:6379, username: default, passwordFile: secrets/cache-admin }
 *   # one node, and every replica it lists in INFO replication (as announced)
 * admin: { sentinels: [redis://10.0.0.5:26379, redis://10.0.0.6:26379], master: mymaster,
 *          username: default, passwordFile: secrets/cache-admin,
 *          sentinelUsername: sentinel, sentinelPasswordFile: secrets/sentinel }  # both optional
 *   # the master the Sentinels name and every replica they know
 * admin: { cluster: [redis://10.0.0.1:6379, redis://10.0.0.2:6379], username: default, passwordFile:
 * secrets/cache-admin }
 *   # every master and replica of the Redis Cluster
 * nodes: discover   # (in admin) default; `only`: the named node(s) alone, nothing discovered
 * ```
 *
 * Exactly one of `url`, `sentinels` and `cluster`; `master` with `sentinels` only. The resolved
 * `url` of the other forms is their first address (what messages name).
 */
import { z } from 'zod';
import type { AdapterKind, AdminTopology } from '../adapters/adapter.js';
import type { Options } from './option.js';
import type { ValueKinds } from './value-kinds.js';

/** A list of Redis addresses (Sentinels, cluster nodes), at most 64. */
const redisList = (kinds: ValueKinds, what: string) =>
  z
    .array(kinds.url.refine((value) => /^rediss?:\/\//.test(value), 'expected a redis:// or rediss:// URL'))
    .min(1, `list at least one ${what}`)
    .max(64, 'must list at most 64 addresses');

/** The options a node form adds to `admin`, each optional (declared once: see `option.ts`). */
export const ADMIN_NODE_OPTIONS = {
  sentinels: {
    schema: (kinds) => redisList(kinds, 'Sentinel').optional(),
    doc: '`redis-acl` only: Sentinels (at most 64) instead of `url`; with `master`',
  },
  master: {
    schema: (kinds) => kinds.text.optional(),
    doc: 'the master the Sentinels monitor (e.g. `mymaster`); with `sentinels` only',
  },
  sentinelUsername: {
    schema: (kinds) => kinds.text.optional(),
    doc: "the Sentinels' user, if they need one; with `sentinels` only",
  },
  sentinelPasswordFile: {
    schema: (kinds) => kinds.password.optional(),
    doc: "the Sentinels' password file, if they need one; with `sentinels` only",
  },
  cluster: {
    schema: (kinds) => redisList(kinds, 'node of the cluster').optional(),
    doc: '`redis-acl` only: some nodes of a Redis Cluster (at most 64) instead of `url`; every master and replica is held',
  },
  nodes: {
    schema: () => z.enum(['discover', 'only']).optional(),
    shown: '`discover`',
    doc: '`redis-acl` only: `discover` finds every node of the backend; `only` holds the named node(s) alone',
  },
} as const satisfies Options;

/** The fields {@link checkAdminForm} judges. */
export interface AdminFormFields {
  url?: string | undefined;
  /** Several hosts of one backend (`admin-urls.ts`): not a node form. */
  urls?: readonly string[] | undefined;
  sentinels?: string[] | undefined;
  master?: string | undefined;
  sentinelUsername?: string | undefined;
  sentinelPasswordFile?: string | undefined;
  cluster?: string[] | undefined;
  nodes?: 'discover' | 'only' | undefined;
}

const NODE_FIELDS = ['sentinels', 'master', 'sentinelUsername', 'sentinelPasswordFile', 'cluster', 'nodes'] as const;

/**
 * Problems of the admin's form: one target, `master` beside `sentinels`, node fields only where the adapter has them.
 */
export function checkAdminForm(admin: AdminFormFields, adapter: AdapterKind | undefined, ctx: z.RefinementCtx): void {
  const problem = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: ['admin', field], message });
  if (adapter !== undefined && adapter.nodeForms !== true) {
    for (const field of NODE_FIELDS) {
      if (admin[field] !== undefined) problem(field, `the ${adapter.kind} adapter holds one node: give url alone`);
    }
    return; // url or urls: judged by checkAdminUrls
  }
  if (admin.urls !== undefined)
    return problem(
      'urls',
      `the ${adapter?.kind ?? 'redis-acl'} adapter finds a backend's nodes itself: give url, sentinels (with master) or cluster`,
    );
  const targets = (['url', 'sentinels', 'cluster'] as const).filter((field) => admin[field] !== undefined);
  if (targets.length === 0)
    return problem(
      'url',
      'give url (one node and its replicas), sentinels (with master) or cluster (some nodes of a Redis Cluster)',
    );
  if (targets.length > 1)
    return problem(targets[1]!, `give one of url, sentinels and cluster, not ${targets.join(' and ')}`);
  if (admin.sentinels !== undefined && admin.master === undefined)
    problem('master', 'name the master the Sentinels monitor (e.g. mymaster)');
  if (admin.sentinels === undefined) {
    for (const field of ['master', 'sentinelUsername', 'sentinelPasswordFile'] as const) {
      if (admin[field] !== undefined) problem(field, 'only with sentinels');
    }
  }
  const listed = admin.sentinels ?? admin.cluster ?? [];
  const seen = new Set<string>();
  listed.forEach((address) => {
    if (seen.has(address)) problem(admin.sentinels ? 'sentinels' : 'cluster', `${address} is listed twice`);
    seen.add(address);
  });
}

/** The resolved admin target: its first address as `url`, and the topology. */
export function adminTarget(admin: AdminFormFields): { url: string; topology?: AdminTopology } {
  const nodes = admin.nodes ?? 'discover';
  if (admin.sentinels !== undefined) {
    return {
      url: admin.sentinels[0]!,
      topology: {
        form: 'sentinel',
        sentinels: admin.sentinels,
        master: admin.master!,
        ...(admin.sentinelUsername !== undefined ? { sentinelUsername: admin.sentinelUsername } : {}),
        ...(admin.sentinelPasswordFile !== undefined ? { sentinelPassword: admin.sentinelPasswordFile } : {}),
        nodes,
      },
    };
  }
  if (admin.cluster !== undefined)
    return { url: admin.cluster[0]!, topology: { form: 'cluster', seeds: admin.cluster, nodes } };
  return { url: admin.url!, ...(admin.nodes !== undefined ? { topology: { form: 'url', nodes } } : {}) };
}
