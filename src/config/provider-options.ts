/**
 * `providers[]`: each provider, its admin connection and its guards. Each option declared once
 * (see `option.ts`); the timing settings, which a provider may also give, in `timing.ts`.
 */
import { z } from 'zod';
import { ADMIN_NODE_OPTIONS } from './admin-nodes.js';
import { ADMIN_URLS_OPTION } from './admin-urls.js';
import { durationSchema } from './duration.js';
import { maxConsumersSchema } from './max-consumers.js';
import { nameSchema } from '../text/names.js';
import { pickOptions, shapeOf, type Options } from './option.js';
import { TIMING_OPTIONS } from './timing.js';

export const ADMIN_OPTIONS = {
  url: {
    schema: (kinds) => kinds.url.optional(),
    doc: 'the backend, connected to as the admin. For `redis-acl`: that node and every replica it lists. One of `url`, `urls`, `sentinels`, `cluster`',
  },
  urls: ADMIN_URLS_OPTION, // several hosts (postgres-roles): see admin-urls.ts
  username: { schema: (kinds) => kinds.text.optional(), doc: 'the admin login' },
  passwordFile: {
    schema: (kinds) => kinds.password.optional(),
    field: 'password',
    doc: 'the file holding the admin password',
  },
  maxConcurrentCalls: {
    schema: () =>
      z.int().positive().max(64, 'must be at most 64: it bounds the admin connections a provider opens').optional(),
    shown: '`4`', // the adapters' DEFAULT_MAX_CONCURRENT_CALLS
    doc: "at most 64: calls at once on this provider, and its admin pool's size",
  },
  ...ADMIN_NODE_OPTIONS, // a backend of several nodes (redis-acl): see admin-nodes.ts
} as const satisfies Options;

export const REMOVAL_GUARD_OPTIONS = {
  share: {
    schema: () => z.number().gt(0, 'must be more than 0').lte(1, 'must be at most 1'),
    default: 0.25,
    doc: 'a change removing more than this share of the consumers…',
  },
  floor: {
    schema: () => z.int().min(0, 'must be at least 0'),
    default: 2,
    doc: '…and more than this many is held back whole until `holdfast confirm-removals <provider> --change <digest>` names it',
  },
} as const satisfies Options;

export const ORPHAN_OPTIONS = {
  prefix: {
    schema: (kinds) => kinds.text,
    shown: '(required with `orphans`)',
    doc: 'logins under this prefix that no consumer claims are reported',
  },
  every: {
    schema: () => durationSchema,
    default: '5m',
    field: 'everyMs',
    doc: "how often the backend's logins are listed for orphans",
  },
  remove: { schema: () => z.boolean(), default: false, doc: '`true` removes orphans (under `manage` only)' },
} as const satisfies Options;

export const PROVIDER_OPTIONS = {
  name: { schema: () => nameSchema, doc: "the provider's name: consumers are `<name>/<id>`" },
  adapter: {
    schema: (kinds) => kinds.adapter,
    doc: '`redis-acl`, `postgres-roles`, `mongodb-users` or `s3-identities`',
  },
  admin: { schema: (kinds) => z.strictObject(shapeOf(ADMIN_OPTIONS, kinds)), options: ADMIN_OPTIONS },
  contributions: {
    schema: (kinds) => kinds.filePath,
    field: 'contributionsPath',
    doc: "the contributions file: the provider's consumers, re-read when it changes",
  },
  policy: {
    /** Validated by the adapter's policy schema (`checkPolicies` in load-config.ts). */
    schema: () => z.unknown().optional(),
    shown: '`{}`',
    doc: "what the provider's consumers may ask for, validated by the adapter: see [Policies](#policies)",
  },
  ...TIMING_OPTIONS, // documented in the Timing table
  management: {
    schema: () => z.enum(['manage', 'observe', 'no-delete']),
    default: 'manage',
    doc: '`manage`; `observe` (check and report only, never create, change or remove); `no-delete` (a consumer no longer declared stops being managed, its login left)',
  },
  removalGuard: {
    schema: (kinds) => z.strictObject(shapeOf(REMOVAL_GUARD_OPTIONS, kinds)),
    default: {},
    options: REMOVAL_GUARD_OPTIONS,
  },
  secretsRoot: {
    schema: (kinds) => kinds.filePath.optional(),
    doc: "grant secrets may also be under this directory (by default only beside the contributions file); the provider's own: no other provider's root is in, around or the same as it",
  },
  rotationOverlap: {
    schema: () => durationSchema.optional(),
    field: 'rotationOverlapMs',
    doc: "a rotated grant secret's old password stays accepted this long beside the new one: on `redis-acl` and `s3-identities` (a PostgreSQL role or a MongoDB user has one password, so there it cannot)",
  },
  rotationOverlapMax: {
    schema: () => durationSchema.optional(),
    field: 'rotationOverlapMaxMs',
    shown: '`1h` (or `rotationOverlap`, if longer)',
    doc: "after a rotation, its login's connections from before it are looked for this long at most (`redis-acl`, `postgres-roles`); on `redis-acl` with `rotationOverlap`, the old password is kept past `rotationOverlap` while one of them remains or a failed login was seen since, and dropped at this bound whatever remains; at least `rotationOverlap`: see [operating](operating.md#old-connections-and-the-cutover)",
  },
  adopt: {
    schema: () => z.boolean(),
    default: false,
    doc: "`true` takes over existing logins this provider did not make (never another provider's, the admin's or `default`); warned at every start",
  },
  maxConsumers: {
    schema: () => maxConsumersSchema.optional(),
    shown: '`sync.maxConsumers`',
    doc: "this provider's bound on the consumers its contributions file declares",
  },
  sharesHoldfastServer: {
    schema: () => z.boolean(),
    default: false,
    doc: "`true` lets the provider's backend be holdfast's own queue Redis or record store server (refused at start-up otherwise, naming both); its consumers may then address none of holdfast's keys, channels or its store's database, and a `redis-acl` provider's deny list gains `-scan -randomkey -dbsize` and the Cluster's key listings: see [security](security.md#holdfasts-own-servers)",
  },
  loginPrefix: {
    schema: (kinds) => kinds.text.optional(),
    doc: "every consumer's login must start with it. Two providers on one server need one each, neither the start of the other's (and key, channel or bucket prefixes of their own)",
  },
  orphans: {
    schema: (kinds) => z.strictObject(shapeOf(ORPHAN_OPTIONS, kinds)).optional(),
    options: ORPHAN_OPTIONS,
  },
} as const satisfies Options;

/**
 * The provider's options resolved as they are, each under its field (`ProviderConfig`); its admin, policy, timing,
 * `maxConsumers` and `orphans` are resolved with what else `loadConfig` knows.
 */
export const PROVIDER_FIELDS = pickOptions(
  PROVIDER_OPTIONS,
  'name',
  'adapter',
  'contributions',
  'management',
  'removalGuard',
  'secretsRoot',
  'adopt',
  'loginPrefix',
  'rotationOverlap',
  'rotationOverlapMax',
);
