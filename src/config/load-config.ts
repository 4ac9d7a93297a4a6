/**
 * Reads holdfast's configuration file: the one place a file becomes a {@link HoldfastConfig}. Each
 * option is declared once (its schema, default, field and meaning) in the tables `config-options.ts`
 * lists and in TIMING_SETTINGS (src/config/timing.ts); docs/configuration.md documents them, checked
 * by `test/unit/docs/configuration-doc.test.ts` (against {@link configSchema} and each adapter's
 * policy schema) and `configuration-rows.test.ts` (each row against its declaration).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import type { AdapterKind } from '../adapters/adapter.js';
import type { HoldfastConfig, HttpConfig, ProviderConfig, QueueConnectionConfig, Timing } from './config.js';
import { DEFAULT_TIMING, TIMING_ENTRIES, TIMING_OPTIONS, type TimingKey } from './timing.js';
import { formatDuration } from './duration.js';
import type { Environment } from './environment.js';
import { backendOverlaps } from './backend-overlap.js';
import { namespaceOverlaps } from './namespace-overlap.js';
import { judgeOwnServers } from './own-servers.js';
import { adminTarget, checkAdminForm } from './admin-nodes.js';
import { adminUrlsTarget, checkAdminUrls } from './admin-urls.js';
import { checkOverlapMax } from './rotation-overlap.js';
import { reservedLogins } from './reserved-logins.js';
import { foreignSecretRoots, secretRootOverlaps } from './secret-root-overlaps.js';
import { invalidFile, YamlSource, type FieldPath } from './yaml-source.js';
import { shardPrefixProblem } from './shard-prefixes.js';
import { omitOptions, pickOptions, resolveFields, shapeOf, type Options } from './option.js';
import { valueKinds } from './value-kinds.js';
import type { ParsedRedisUrl } from './redis-url.js';
import { QUEUE_OPTIONS } from './queue-options.js';
import { STORE_OPTIONS } from './store-options.js';
import { HTTP_OPTIONS } from './http-options.js';
import { LOG_FORMATS, LOG_LEVELS, LOG_OPTIONS, SYNC_OPTIONS, TOP_OPTIONS, WORKER_OPTIONS } from './process-options.js';
import { ADMIN_OPTIONS, ORPHAN_OPTIONS, PROVIDER_FIELDS, PROVIDER_OPTIONS } from './provider-options.js';

/** `host:port` where the HTTP server listens (declared in `listen-address.ts`; `--http` parses it too). */
export { parseListen } from './listen-address.js';

export interface LoadConfigOptions {
  /** The adapters holdfast has, by the name configuration uses. */
  adapters: ReadonlyMap<string, AdapterKind>;
  environment: Environment;
  /** Creates nothing: a missing fingerprint key is left missing (an empty key; for `status`). */
  readOnly?: boolean;
}

/** Timing when neither the provider nor `defaults` says otherwise (declared in `timing.ts`). */
export { DEFAULT_TIMING };
const FINGERPRINT_KEY_BYTES = 32;

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
  const providers = config.providers.map((_, index) =>
    resolveProvider({ source, config, index, policies, own, problems }),
  );
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
    queue: { connection: queueConnection(config.queue), ...resolveFields(QUEUE_FIELDS, config.queue) },
    store: resolveFields(STORE_OPTIONS, config.store),
    fingerprintKey,
    worker: resolveFields(WORKER_OPTIONS, config.worker),
    sync: resolveFields(SYNC_FIELDS, config.sync),
    log,
    providers,
    http: httpSettings(config.http),
  };
}

/** What {@link resolveProvider} needs: the parsed file, and what was judged across its providers. */
interface ProviderContext {
  source: YamlSource;
  config: ParsedConfig;
  index: number;
  policies: ReadonlyMap<number, unknown>;
  own: Awaited<ReturnType<typeof judgeOwnServers>>;
  problems: string[];
}

type ParsedConfig = z.output<ReturnType<typeof configSchema>>;

/** The provider at `index`, resolved: its options, admin connection, timing, bounds and reserved logins. */
function resolveProvider({ source, config, index, policies, own, problems }: ProviderContext): ProviderConfig {
  const provider = config.providers[index]!;
  const timing = resolveTiming(source, provider, index, config.defaults, problems);
  const reserved = reservedLogins({
    provider,
    queueUsername: config.queue.username,
    storeUsername: config.store.username,
  });
  const { maxConsumers, orphans } = provider;
  return {
    ...resolveFields(PROVIDER_FIELDS, provider),
    admin: {
      ...(provider.admin.urls !== undefined ? adminUrlsTarget(provider.admin) : adminTarget(provider.admin)),
      ...resolveFields(ADMIN_FIELDS, provider.admin),
      ...(provider.adapter.nodeForms
        ? { pace: { verifyEveryMs: timing.verifyEveryMs, checkTimeoutMs: timing.checkTimeoutMs } }
        : {}),
    },
    contributionsMaxBytes: config.sync.contributionsMaxBytes,
    maxConsumers: {
      max: maxConsumers ?? config.sync.maxConsumers,
      setting: maxConsumers === undefined ? 'sync.maxConsumers' : `providers[${index}].maxConsumers`,
    },
    policy: own.ownNames.has(index)
      ? (provider.adapter.ownServerPolicy?.(policies.get(index)) ?? policies.get(index))
      : policies.get(index),
    ...(own.ownNames.has(index) ? { ownNames: own.ownNames.get(index) } : {}),
    timing,
    foreignSecretRoots: foreignSecretRoots(config.providers, index),
    reservedLogins: reserved.logins,
    reservedReasons: reserved.reasons,
    ...(orphans ? { orphans: resolveFields(ORPHAN_OPTIONS, orphans) } : {}),
  };
}

/** The queue's options resolved as they are (its connection is built from the others). */
const QUEUE_FIELDS = omitOptions(QUEUE_OPTIONS, 'url', 'cluster', 'username', 'passwordFile');
/** `sync.maxConsumers` resolves per provider, into {@link ProviderConfig.maxConsumers}. */
const SYNC_FIELDS = omitOptions(SYNC_OPTIONS, 'maxConsumers');
/** The admin's options resolved as they are (its target is built from the others: `admin-nodes.ts`, `admin-urls.ts`). */
const ADMIN_FIELDS = pickOptions(ADMIN_OPTIONS, 'username', 'passwordFile', 'maxConcurrentCalls');

/** The HTTP server's settings: basic auth when a password file is given. */
function httpSettings(http: { username: string; passwordFile?: string | undefined } & Omit<HttpConfig, 'auth'>) {
  const { listen, username, passwordFile, readOnly, hosts } = http;
  return { listen, auth: passwordFile ? { username, password: passwordFile } : undefined, readOnly, hosts };
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

/**
 * The configuration file's schema, built from the options' declarations (`config-options.ts`) and
 * the checks that span several options; `dir` is the file's directory (relative paths resolve there).
 */
export function configSchema(dir: string, adapters: ReadonlyMap<string, AdapterKind>) {
  const kinds = valueKinds(dir, adapters);
  const section = <T extends Options>(options: T) => z.strictObject(shapeOf(options, kinds));
  const provider = section(PROVIDER_OPTIONS).superRefine((p, ctx) => {
    const adapter = typeof p.adapter === 'object' ? p.adapter : undefined;
    checkAdminForm(p.admin, adapter, ctx);
    // a backend of several nodes is named by its node fields; one of several PostgreSQL hosts by urls
    if (adapter?.nodeForms !== true) checkAdminUrls(p.admin, adapter, ctx);
    checkOverlapMax(p, ctx);
  });
  return z.strictObject({
    queue: section(QUEUE_OPTIONS)
      .superRefine(checkQueueTarget)
      .superRefine(({ prefix, shards }, ctx) => {
        const problem = shardPrefixProblem(prefix, shards);
        if (problem) ctx.addIssue({ code: 'custom', path: ['prefix'], message: problem });
      }),
    store: section(STORE_OPTIONS),
    http: section(HTTP_OPTIONS).prefault({}),
    ...shapeOf(TOP_OPTIONS, kinds),
    worker: section(WORKER_OPTIONS).prefault({}),
    sync: section(SYNC_OPTIONS).prefault({}),
    log: section(LOG_OPTIONS).prefault({}),
    defaults: section(TIMING_OPTIONS).prefault({}),
    providers: z.array(provider).min(1, 'at least one provider is required'),
  });
}

type QueueFields = { url?: ParsedRedisUrl | undefined; cluster?: ParsedRedisUrl[] | undefined; prefix: string };

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
    level: pick('HOLDFAST_LOG_LEVEL', environment.logLevel, LOG_LEVELS) ?? file.level ?? LOG_OPTIONS.level.default,
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
