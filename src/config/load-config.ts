/**
 * Reads holdfast's configuration file. Every option, its default and its meaning are in
 * docs/configuration.md, which `test/unit/docs/configuration-doc.test.ts` checks against
 * {@link configSchema}, each adapter's policy schema and TIMING_SETTINGS (src/config/timing.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { AdapterKind } from '../adapters/adapter.js';
import type { HoldfastConfig, QueueConnectionConfig, RedisConnectionConfig, Timing } from './config.js';
import { DEFAULT_TIMING, TIMING_ENTRIES, timingFields, type TimingKey } from './timing.js';
import { shortAdminSecret } from './admin-secret.js';
import { durationSchema, formatDuration } from './duration.js';
import { hostEntrySchema } from './http-hosts.js';
import { DEFAULT_CONTRIBUTIONS_MAX_BYTES, sizeSchema } from '../text/size.js';
import { DEFAULT_MAX_CONSUMERS, maxConsumersSchema } from './max-consumers.js';
import { readSecretFile } from '../secrets/secret-file.js';
import type { Environment } from './environment.js';
import { nameSchema } from '../text/names.js';
import { backendOverlaps } from './backend-overlap.js';
import { namespaceOverlaps } from './namespace-overlap.js';
import { judgeOwnServers } from './own-servers.js';
import { adminNodeFields, adminTarget, checkAdminForm } from './admin-nodes.js';
import { adminUrlsField, adminUrlsTarget, checkAdminUrls } from './admin-urls.js';
import { reservedLogins } from './reserved-logins.js';
import { foreignSecretRoots, secretRootOverlaps } from './secret-root-overlaps.js';
import { invalidFile, YamlSource, type FieldPath } from './yaml-source.js';
import { MAX_SHARDS, shardPrefixProblem } from './shard-prefixes.js';

export interface LoadConfigOptions {
  /** The adapters holdfast has, by the name configuration uses. */
  adapters: ReadonlyMap<string, AdapterKind>;
  environment: Environment;
  /** Creates nothing: a missing fingerprint key is left missing (an empty key; for `status`). */
  readOnly?: boolean;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const LOG_FORMATS = ['json', 'pretty'] as const;
/** Timing when neither the provider nor `defaults` says otherwise (declared in `timing.ts`). */
export { DEFAULT_TIMING };
const FINGERPRINT_KEY_BYTES = 32;
const NOT_EMPTY = 'must not be empty';

/**
 * Loads, validates and resolves the configuration at `path`. Every problem found is listed in
 * one `CONFIG_INVALID` HoldfastError, each as `<file>:<line>: <field>: <reason>`.
 */
export async function loadConfig(path: string, options: LoadConfigOptions): Promise<HoldfastConfig> {
  const file = resolve(path);
  const read = await YamlSource.read(file);
  if (!read.ok) throw invalidFile('CONFIG_INVALID', 'configuration', file, read.problems);
  const { source } = read;
  if (source.value === null)
    throw invalidFile('CONFIG_INVALID', 'configuration', file, [`${file}:1: (top level): the file is empty`]);

  const problems: string[] = [];
  const parsed = await source.check(configSchema(dirname(file), options.adapters), source.value, problems);
  const rawProviders = (source.value as { providers?: unknown }).providers;
  const policies = await checkPolicies(source, rawProviders, options.adapters, problems);
  problems.push(...source.duplicates(rawProviders, ['providers'], 'name'));
  const log = logSettings(parsed.ok ? parsed.value.log : {}, options.environment, problems);
  if (!parsed.ok || problems.length > 0) throw invalidFile('CONFIG_INVALID', 'configuration', file, problems);
  const config = parsed.value;

  problems.push(...backendOverlaps(source, config.providers));
  problems.push(...namespaceOverlaps(source, config.providers, policies));
  const own = await judgeOwnServers(source, config); // holdfast's own servers: own-servers.ts
  problems.push(...own.problems);
  const providers = config.providers.map((provider, index) => {
    const timing = resolveTiming(source, provider, index, config.defaults, problems);
    const reserved = reservedLogins({
      provider,
      queueUsername: config.queue.username,
      storeUsername: config.store.username,
    });
    return {
      name: provider.name,
      adapter: provider.adapter,
      admin: {
        ...(provider.admin.urls !== undefined ? adminUrlsTarget(provider.admin) : adminTarget(provider.admin)),
        username: provider.admin.username,
        password: provider.admin.passwordFile,
        ...(provider.admin.maxConcurrentCalls === undefined
          ? {}
          : { maxConcurrentCalls: provider.admin.maxConcurrentCalls }),
        ...(provider.adapter.nodeForms
          ? { pace: { verifyEveryMs: timing.verifyEveryMs, checkTimeoutMs: timing.checkTimeoutMs } }
          : {}),
      },
      contributionsPath: provider.contributions,
      contributionsMaxBytes: config.sync.contributionsMaxBytes,
      maxConsumers: {
        max: provider.maxConsumers ?? config.sync.maxConsumers,
        setting: provider.maxConsumers === undefined ? 'sync.maxConsumers' : `providers[${index}].maxConsumers`,
      },
      policy: own.ownNames.has(index)
        ? (provider.adapter.ownServerPolicy?.(policies.get(index)) ?? policies.get(index))
        : policies.get(index),
      ...(own.ownNames.has(index) ? { ownNames: own.ownNames.get(index) } : {}),
      timing,
      management: provider.management,
      removalGuard: provider.removalGuard,
      secretsRoot: provider.secretsRoot,
      foreignSecretRoots: foreignSecretRoots(config.providers, index),
      adopt: provider.adopt,
      ...(provider.loginPrefix !== undefined ? { loginPrefix: provider.loginPrefix } : {}),
      reservedLogins: reserved.logins,
      reservedReasons: reserved.reasons,
      ...(provider.rotationOverlap !== undefined ? { rotationOverlapMs: provider.rotationOverlap } : {}),
      ...(provider.orphans
        ? {
            orphans: {
              prefix: provider.orphans.prefix,
              everyMs: provider.orphans.every,
              remove: provider.orphans.remove,
            },
          }
        : {}),
    };
  });
  problems.push(...(await secretRootOverlaps(source, config.providers)));
  if (problems.length > 0) throw invalidFile('CONFIG_INVALID', 'configuration', file, problems);

  const fingerprintKey = await readFingerprintKey(
    config.fingerprintKeyFile,
    (reason) => problems.push(source.problem(['fingerprintKeyFile'], reason)),
    options.readOnly === true,
  );
  if (!fingerprintKey) throw invalidFile('CONFIG_INVALID', 'configuration', file, problems);

  return {
    source: file,
    queue: {
      connection: queueConnection(config.queue),
      prefix: config.queue.prefix,
      name: config.queue.name,
      shards: config.queue.shards,
    },
    store: {
      url: config.store.url,
      username: config.store.username,
      password: config.store.passwordFile,
      database: config.store.database,
      connectTimeoutMs: config.store.connectTimeout,
    },
    fingerprintKey,
    worker: config.worker,
    sync: {
      pollEveryMs: config.sync.pollEvery,
      resyncEveryMs: config.sync.resyncEvery,
      sweepEveryMs: config.sync.sweepEvery,
      contributionsMaxBytes: config.sync.contributionsMaxBytes,
    },
    log,
    providers,
    http: config.http,
  };
}

type TimingFields = Partial<Record<TimingKey, number>>;

/** A provider's timing: its own, else the defaults', else holdfast's; settings out of their bounds go to `problems`. */
function resolveTiming(
  source: YamlSource,
  provider: TimingFields,
  index: number,
  defaults: TimingFields,
  problems: string[],
): Timing {
  const given = (key: TimingKey) => provider[key] ?? defaults[key];
  const timing: Timing = { ...DEFAULT_TIMING };
  for (const [field, { key }] of TIMING_ENTRIES) {
    const value = given(key);
    if (value !== undefined) timing[field] = value;
  }
  const valueOf = (key: TimingKey) => timing[FIELD_OF[key]];
  /** Reported where the user wrote one of `keys`: the provider first, then the defaults. */
  const conflict = (keys: TimingKey[], reason: string) => {
    const path = firstSet(provider, keys, ['providers', index]) ??
      firstSet(defaults, keys, ['defaults']) ?? ['providers', index];
    problems.push(source.problem(path, reason));
  };
  for (const [, { key, atLeast, atMost }] of BOUNDED) {
    const value = valueOf(key);
    const other = (atLeast ?? atMost)!;
    const bound = valueOf(other);
    if (value === undefined || bound === undefined) continue;
    if (atLeast ? value < bound : value > bound) {
      conflict(
        [key, other],
        `${key} (${formatDuration(value)}) must be at ${atLeast ? 'least' : 'most'} ${other} (${formatDuration(bound)})`,
      );
    }
  }
  return timing;
}

const FIELD_OF = Object.fromEntries(TIMING_ENTRIES.map(([field, { key }]) => [key, field])) as Record<
  TimingKey,
  keyof Timing & (typeof TIMING_ENTRIES)[number][0]
>;

/** The settings bound to another, in the order their problems are listed. */
const BOUNDED = TIMING_ENTRIES.filter(
  ([, setting]) => setting.atLeast !== undefined || setting.atMost !== undefined,
) as Array<[string, { key: TimingKey; atLeast?: TimingKey; atMost?: TimingKey }]>;

function firstSet(fields: TimingFields, keys: TimingKey[], at: FieldPath): FieldPath | undefined {
  const key = keys.find((candidate) => fields[candidate] !== undefined);
  return key === undefined ? undefined : [...at, key];
}

/** The configuration file's schema; `dir` is the file's directory (relative paths resolve there). */
export function configSchema(dir: string, adapters: ReadonlyMap<string, AdapterKind>) {
  const text = z.string().min(1, NOT_EMPTY);
  const filePath = text.transform((path) => resolve(dir, path));
  const password = filePath.transform(readPassword);
  const url = text.superRefine((value, ctx) => {
    const problem = urlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
  const mongoUrl = url.refine(
    (value) => /^mongodb(\+srv)?:\/\//.test(value),
    'expected a mongodb:// or mongodb+srv:// URL',
  );
  const known = [...adapters.keys()].sort().join(', ') || '(none)';
  const provider = z
    .strictObject({
      name: nameSchema,
      adapter: z.string().transform((kind, ctx) => {
        const adapter = adapters.get(kind);
        if (adapter) return adapter;
        ctx.addIssue({ code: 'custom', message: `unknown adapter "${kind}"; known adapters: ${known}` });
        return z.NEVER;
      }),
      admin: z.strictObject({
        url: url.optional(),
        urls: adminUrlsField(url), // several hosts (postgres-roles): see admin-urls.ts
        username: text.optional(),
        passwordFile: password.optional(),
        maxConcurrentCalls: z
          .int()
          .positive()
          .max(64, 'must be at most 64: it bounds the admin connections a provider opens')
          .optional(),
        // a backend of several nodes (redis-acl): see admin-nodes.ts
        ...adminNodeFields(url, password, text),
      }),
      contributions: filePath,
      /** Validated by the adapter's policy schema in {@link checkPolicies}. */
      policy: z.unknown().optional(),
      ...timingFields,
      management: z.enum(['manage', 'observe', 'no-delete']).default('manage'),
      removalGuard: z
        .strictObject({
          share: z.number().gt(0, 'must be more than 0').lte(1, 'must be at most 1').default(0.25),
          floor: z.int().min(0, 'must be at least 0').default(2),
        })
        .prefault({}),
      secretsRoot: filePath.optional(),
      rotationOverlap: durationSchema.optional(),
      adopt: z.boolean().default(false),
      maxConsumers: maxConsumersSchema.optional(),
      sharesHoldfastServer: z.boolean().default(false), // own-servers.ts
      loginPrefix: text.optional(),
      orphans: z
        .strictObject({ prefix: text, every: durationSchema.default(300_000), remove: z.boolean().default(false) })
        .optional(),
    })
    .superRefine((p, ctx) => {
      const adapter = typeof p.adapter === 'object' ? p.adapter : undefined;
      checkAdminForm(p.admin, adapter, ctx);
      // a backend of several nodes is named by its node fields; one of several PostgreSQL hosts by urls
      if (adapter?.nodeForms !== true) checkAdminUrls(p.admin, adapter, ctx);
    });
  return z.strictObject({
    queue: z
      .strictObject({
        url: url.transform(parseRedisUrl).optional(),
        cluster: z.array(url.transform(parseRedisUrl)).min(1, 'list at least one node of the cluster').optional(),
        username: text.optional(),
        passwordFile: password.optional(),
        prefix: text.default('holdfast'),
        name: text.default('consumers'),
        shards: z.int().min(1, 'must be at least 1').max(MAX_SHARDS, `must be at most ${MAX_SHARDS}`).default(1),
      })
      .superRefine(checkQueueTarget)
      .superRefine(({ prefix, shards }, ctx) => {
        const problem = shardPrefixProblem(prefix, shards);
        if (problem) ctx.addIssue({ code: 'custom', path: ['prefix'], message: problem });
      }),
    store: z.strictObject({
      url: mongoUrl,
      username: text.optional(),
      passwordFile: password.optional(),
      database: text.default('holdfast'),
      connectTimeout: durationSchema.default(5_000),
    }),
    http: z
      .strictObject({
        listen: text.transform(parseListen).optional(),
        username: text.default('holdfast'),
        passwordFile: password.optional(),
        readOnly: z.boolean().default(true),
        hosts: z.array(hostEntrySchema).default([]),
      })
      .transform(({ listen, username, passwordFile, readOnly, hosts }) => ({
        listen,
        auth: passwordFile ? { username, password: passwordFile } : undefined,
        readOnly,
        hosts,
      }))
      .prefault({}),
    fingerprintKeyFile: filePath.prefault('.holdfast/fingerprint.key'),
    worker: z.strictObject({ concurrency: z.int().positive().default(32) }).prefault({}),
    sync: z
      .strictObject({
        pollEvery: durationSchema.default(5_000),
        resyncEvery: durationSchema.default(5_000),
        sweepEvery: durationSchema.default(1_800_000),
        contributionsMaxBytes: sizeSchema.default(DEFAULT_CONTRIBUTIONS_MAX_BYTES),
        maxConsumers: maxConsumersSchema.default(DEFAULT_MAX_CONSUMERS),
      })
      .prefault({}),
    log: z.strictObject({ level: z.enum(LOG_LEVELS).optional(), format: z.enum(LOG_FORMATS).optional() }).prefault({}),
    defaults: z.strictObject(timingFields).prefault({}),
    providers: z.array(provider).min(1, 'at least one provider is required'),
  });
}

/** `host:port` (`[::1]:9100` for IPv6; a port alone means loopback) where the HTTP server listens. */
export function parseListen(text: string, ctx?: z.RefinementCtx): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text) ?? /^()()(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    const message = `expected host:port, e.g. 127.0.0.1:9100; got ${JSON.stringify(text)}`;
    if (!ctx) throw new Error(message);
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  }
  return { host: match[1] || match[2] || '127.0.0.1', port };
}

/** Why `url` is unusable (not a URL, or carrying credentials), without repeating it. */
function urlProblem(url: string): string | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:([^/?#]*)@)?/.exec(url);
  if (!match) return 'expected a URL such as redis://127.0.0.1:6379';
  const userinfo = match[1];
  if (userinfo === undefined) return undefined;
  return userinfo.includes(':')
    ? 'the URL must not carry a password: put it in passwordFile'
    : 'the URL must not carry a username: put it in username';
}

function parseRedisUrl(text: string, ctx: z.RefinementCtx): ParsedRedisUrl {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('expected a URL such as redis://127.0.0.1:6379/0');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return fail('expected a redis:// or rediss:// URL');
  if (url.hostname === '') return fail('the URL has no host');
  const db = url.pathname === '' || url.pathname === '/' ? 0 : Number(url.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0) return fail('the path must be a database number, e.g. redis://127.0.0.1:6379/0');
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 6379 : Number(url.port),
    db,
    tls: url.protocol === 'rediss:',
  };
}

type QueueFields = { url?: ParsedRedisUrl | undefined; cluster?: ParsedRedisUrl[] | undefined; prefix: string };
type ParsedRedisUrl = Omit<RedisConnectionConfig, 'username' | 'password'>;

/**
 * `queue` names one Redis (`url`) or a Redis Cluster (`cluster`), not both. On a cluster the
 * prefix must hold a hash tag: BullMQ's scripts and holdfast's own each touch several keys,
 * which a cluster serves only from one slot.
 */
function checkQueueTarget(queue: QueueFields, ctx: z.RefinementCtx): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (queue.url === undefined && queue.cluster === undefined)
    return problem('url', 'give url (one Redis) or cluster (the nodes of a Redis Cluster)');
  if (queue.url !== undefined && queue.cluster !== undefined)
    return problem('cluster', 'give either url (one Redis) or cluster (a Redis Cluster), not both');
  // a node already refused (its URL) is not judged again
  if (queue.cluster === undefined || queue.cluster.some((node) => typeof node !== 'object')) return;
  if (queue.cluster.some((node) => node.db !== 0))
    problem('cluster', 'a Redis Cluster has only database 0: give its nodes without a database (redis://host:port)');
  if (new Set(queue.cluster.map((node) => node.tls)).size > 1)
    problem('cluster', 'every node must be redis:// or every node rediss://, not a mix');
  if (!hasHashTag(queue.prefix)) {
    problem(
      'prefix',
      `on a Redis Cluster the prefix must hold a hash tag, e.g. "{${queue.prefix.replace(/[{}]/g, '')}}": each script touches several keys, which must share one slot`,
    );
  }
}

/** Whether `key` holds a Redis Cluster hash tag: a `{`, then at least one character before the first `}` after it. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf('{');
  if (open < 0) return false;
  const close = key.indexOf('}', open + 1);
  return close > open + 1;
}

/** The queue's connection, from validated fields. */
function queueConnection(
  queue: QueueFields & { username?: string | undefined; passwordFile?: string | undefined },
): QueueConnectionConfig {
  const credentials = { username: queue.username, password: queue.passwordFile };
  if (queue.cluster)
    return {
      nodes: queue.cluster.map(({ host, port }) => ({ host, port })),
      tls: queue.cluster[0]!.tls,
      ...credentials,
    };
  return { ...queue.url!, ...credentials };
}

/** The password in `path`, less one trailing newline. Messages name the path, never the content. */
function readPassword(path: string, ctx: z.RefinementCtx): string {
  let password: string;
  try {
    password = readSecretFile(path);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${errnoCode(error)})` });
    return z.NEVER;
  }
  const problem = password === '' ? `${path} is empty` : shortAdminSecret(path, password);
  if (problem === undefined) return password;
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
}

/** Each provider's policy, validated by its adapter's schema (an absent policy is `{}`). */
async function checkPolicies(
  source: YamlSource,
  rawProviders: unknown,
  adapters: ReadonlyMap<string, AdapterKind>,
  problems: string[],
): Promise<Map<number, unknown>> {
  const policies = new Map<number, unknown>();
  if (!Array.isArray(rawProviders)) return policies;
  for (const [index, raw] of rawProviders.entries()) {
    const { adapter, policy } = (typeof raw === 'object' && raw !== null ? raw : {}) as {
      adapter?: unknown;
      policy?: unknown;
    };
    const kind = typeof adapter === 'string' ? adapters.get(adapter) : undefined;
    if (!kind) continue;
    const checked = await source.check(kind.policySchema, policy ?? {}, problems, ['providers', index, 'policy']);
    if (checked.ok) policies.set(index, checked.value);
  }
  return policies;
}

/** The log settings: the environment's override, else the file's, else by terminal. */
function logSettings(
  file: { level?: (typeof LOG_LEVELS)[number] | undefined; format?: (typeof LOG_FORMATS)[number] | undefined },
  environment: Environment,
  problems: string[],
): HoldfastConfig['log'] {
  const pick = <T extends string>(
    variable: string,
    value: string | undefined,
    allowed: readonly T[],
  ): T | undefined => {
    if (value === undefined) return undefined;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    problems.push(`${variable}: expected one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
    return undefined;
  };
  return {
    level: pick('HOLDFAST_LOG_LEVEL', environment.logLevel, LOG_LEVELS) ?? file.level ?? 'info',
    format:
      pick('HOLDFAST_LOG_FORMAT', environment.logFormat, LOG_FORMATS) ??
      file.format ??
      (environment.stdoutIsTTY ? 'pretty' : 'json'),
  };
}

/**
 * The HMAC key in `path`; when the file is missing, 32 random bytes are written there (mode
 * 0600, parent directory 0700). Problems go to `report`; the key itself is never shown.
 */
async function readFingerprintKey(
  path: string,
  report: (reason: string) => void,
  readOnly = false,
): Promise<Buffer | undefined> {
  try {
    const key = await readFile(path);
    if (key.length >= FINGERPRINT_KEY_BYTES) return key;
    report(
      `${path} holds ${key.length} bytes; a fingerprint key needs at least ${FINGERPRINT_KEY_BYTES} (delete it to have one created)`,
    );
    return undefined;
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') {
      report(`cannot read ${path} (${errnoCode(error)})`);
      return undefined;
    }
  }
  if (readOnly) return Buffer.alloc(0);
  const key = randomBytes(FINGERPRINT_KEY_BYTES);
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, key, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process created it just now: use theirs.
    if (errnoCode(error) === 'EEXIST') return readFingerprintKey(path, report, readOnly);
    report(`cannot create ${path} (${errnoCode(error)})`);
    return undefined;
  }
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
