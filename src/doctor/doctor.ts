/**
 * `holdfast doctor`: what this process, as the user it runs as, would trip over. Every grant
 * secret the contributions name is read and judged as a worker would, and what its bytes hold that
 * its writer probably did not mean is named (`secrets/secret-findings.ts`: whitespace, line ends, a
 * byte-order mark, bytes not UTF-8, the form of a hash); every backend, the queue's
 * Redis and the record store are asked to answer, and the store is timed on an `_id` read and
 * update (named when slow per operation, with what it probably lacks). Each problem is one line saying what is wrong,
 * where, and what to do. Nothing is written anywhere.
 */
import { MongoClient } from 'mongodb';
import type { Adapter } from '../adapters/adapter.js';
import { connectAdapter, isRedisCluster, type HoldfastConfig, type ProviderConfig } from '../config/config.js';
import { loadContributions } from '../desired/load-contributions.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import type { Scrubber } from '../logging/scrubber.js';
import { queueRedis, queueWhereOf, type QueueRedis } from '../queue/bull-connection.js';
import { inspectGrantSecret } from '../secrets/grant-secret.js';
import { findingInWords, type SecretFinding } from '../secrets/secret-findings.js';
import { secretRootsOf } from '../secrets/secret-roots.js';
import { measureStoreSpeed, slowStoreVerdict } from '../store/store-speed.js';

/** How long each server is given to answer. */
export const DOCTOR_TIMEOUT_MS = 5_000;

/** What to do about a grant secret's problem, by its code. */
function secretAdvice(code: string, uid: number): string {
  switch (code) {
    case 'SECRET_MISSING':
      return "write it (the mesh writes it beside the contributions), or correct the consumer's secret path";
    case 'SECRET_UNREADABLE':
      return `make it readable by uid ${uid} (chown or chmod), or run holdfast as its owner`;
    default:
      return "write its password (8 to 4096 bytes of UTF-8 text on one line) to a regular file of its own, in its provider's directories";
  }
}

async function grantSecretProblems(provider: ProviderConfig, uid: number): Promise<string[]> {
  let state;
  try {
    state = await loadContributions(provider);
  } catch (error) {
    if (!isHoldfastError(error, 'CONTRIBUTIONS_INVALID', 'CONTRIBUTIONS_BEYOND_BOUNDS')) throw error;
    return error.problems.map(
      (line) =>
        `contributions of ${provider.name}: ${line}; correct the file (the last good desired state stays in force meanwhile)`,
    );
  }
  const problems: string[] = [];
  const roots = secretRootsOf(provider);
  for (const { key, desired } of state.consumers) {
    for (const problem of desired.problems)
      problems.push(`consumer ${key} refused: ${problem}; correct its entry or the provider's policy`);
    if (desired.problems.length > 0) continue; // refused: its secret is not read
    try {
      problems.push(
        ...secretFileProblems(key, desired.secretPath, await inspectGrantSecret(desired.secretPath, roots), uid),
      );
    } catch (error) {
      if (!isHoldfastError(error)) throw error;
      problems.push(`grant secret of ${key}: ${error.message}; ${secretAdvice(error.code, uid)}`);
    }
  }
  return problems;
}

/** What to do about a finding in a grant secret's bytes. */
function findingAdvice(f: SecretFinding): string {
  const hash = f.kind === 'sha256-hex' || f.kind === 'scram-verifier' || f.kind === 'md5-hash';
  return hash
    ? 'write the password itself, not a hash of it (holdfast hashes it for the backend)'
    : 'rewrite it as one line holding the password alone';
}

/**
 * A grant secret's findings, one line each (`secret-findings.ts`), and its refusal when no finding
 * explains it (empty, too short, control characters): the words of each, never the secret.
 */
function secretFileProblems(
  key: string,
  path: string,
  { findings, refusal }: Awaited<ReturnType<typeof inspectGrantSecret>>,
  uid: number,
): string[] {
  const lines = findings.map((f) => `grant secret of ${key}: ${path} ${findingInWords(f)}; ${findingAdvice(f)}`);
  if (refusal && !findings.some((f) => f.refused))
    lines.push(`grant secret of ${key}: ${refusal.message}; ${secretAdvice(refusal.code, uid)}`);
  return lines;
}

/** Why `run` did not answer within the doctor's time, in words (scrubbed), or undefined when it did. */
async function unanswered(
  run: (signal: AbortSignal) => Promise<unknown>,
  scrubber: Scrubber,
): Promise<string | undefined> {
  const signal = AbortSignal.timeout(DOCTOR_TIMEOUT_MS);
  try {
    await Promise.race([
      run(signal),
      new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error(`no answer within ${DOCTOR_TIMEOUT_MS} ms`)), {
          once: true,
        }),
      ),
    ]);
    return undefined;
  } catch (error) {
    return scrubber.describe(error);
  }
}

async function backendProblems(
  provider: ProviderConfig,
  index: number,
  source: string,
  scrubber: Scrubber,
): Promise<string[]> {
  const adapter = connectAdapter(provider);
  try {
    const ask =
      adapter.ping?.bind(adapter) ??
      (adapter.list ? (options: { signal: AbortSignal }) => adapter.list!('', options) : undefined);
    if (!ask) return [];
    const why = await unanswered((signal) => ask({ signal }), scrubber);
    if (why)
      return [
        `backend of provider ${provider.name} (${provider.admin.url}) does not answer: ${why}; start it, or correct providers[${index}].admin in ${source}`,
      ];
    return await publicRightsProblems(adapter, provider, scrubber);
  } finally {
    await adapter.close().catch(() => undefined);
  }
}

/** What the backend lets every login do beyond the provider's policy (PostgreSQL's PUBLIC), one line each. */
async function publicRightsProblems(adapter: Adapter, provider: ProviderConfig, scrubber: Scrubber): Promise<string[]> {
  if (!adapter.publicRights) return [];
  let found: string[] = [];
  const why = await unanswered(async (signal) => (found = await adapter.publicRights!({ signal })), scrubber);
  const where = `backend of provider ${provider.name} (${provider.admin.url})`;
  if (why) return [`${where}: what PUBLIC holds could not be read: ${why}; check the admin may read the catalogs`];
  return found.map((line) => `${where}: ${scrubber.scrub(line)}`);
}

async function queueProblems(config: HoldfastConfig, scrubber: Scrubber): Promise<string[]> {
  const redis = queueRedis(config.queue.connection, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: DOCTOR_TIMEOUT_MS,
  });
  let last: unknown;
  redis.on('error', (error: unknown) => (last = error));
  try {
    let shape: string | undefined;
    const why = await unanswered(async () => {
      try {
        await redis.connect();
        await redis.ping();
      } catch (error) {
        throw last ?? error; // the connection's own error says more than "Connection is closed"
      }
      shape = await clusterShape(redis, isRedisCluster(config.queue.connection));
    }, scrubber);
    const where = queueWhereOf(config.queue.connection);
    if (why)
      return [`the queue's Redis (${where}) does not answer: ${why}; start it, or correct queue in ${config.source}`];
    return shape ? [`the queue's Redis (${where}) ${shape}; correct queue in ${config.source}`] : [];
  } finally {
    redis.disconnect();
  }
}

/**
 * What is wrong with how the queue's Redis is named: a node of a Redis Cluster given as `url`
 * (its commands would be MOVED to other nodes), or a cluster that is not serving every slot.
 */
async function clusterShape(redis: QueueRedis, asCluster: boolean): Promise<string | undefined> {
  if (!asCluster) {
    const info = await redis.info('cluster');
    return /cluster_enabled:1/.test(info)
      ? 'is a node of a Redis Cluster: list its nodes in queue.cluster instead of queue.url'
      : undefined;
  }
  const state = /cluster_state:(\w+)/.exec(String(await redis.call('CLUSTER', 'INFO')))?.[1];
  return state === 'ok'
    ? undefined
    : `is a Redis Cluster whose state is ${state ?? 'unknown'}: some slots are not served`;
}

/** How long the store's speed probe may take: an unindexed scan of a large store takes seconds per operation. */
const SPEED_TIMEOUT_MS = 4 * DOCTOR_TIMEOUT_MS;

async function storeProblems(config: HoldfastConfig, scrubber: Scrubber): Promise<string[]> {
  const { url, username, password, database } = config.store;
  const client = new MongoClient(url, {
    ...(username ? { auth: { username, password } } : {}),
    serverSelectionTimeoutMS: DOCTOR_TIMEOUT_MS - 1000,
    connectTimeoutMS: DOCTOR_TIMEOUT_MS - 1000,
  });
  try {
    const why = await unanswered(async () => {
      await client.connect();
      await client.db(database).command({ ping: 1 });
    }, scrubber);
    if (why)
      return [`the record store (${url}) does not answer: ${why}; start it, or correct store in ${config.source}`];
    return await speedProblems(client, config, scrubber);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The store named when it is slow per operation, with what is probably missing. */
async function speedProblems(client: MongoClient, config: HoldfastConfig, scrubber: Scrubber): Promise<string[]> {
  const { url, database } = config.store;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), SPEED_TIMEOUT_MS)));
  try {
    const speed = await Promise.race([measureStoreSpeed(client.db(database)), late]);
    if (speed === null) return []; // no records yet: nothing to time
    if (speed === 'late')
      return [
        `the record store (${url}) did not finish an _id read and update within ${SPEED_TIMEOUT_MS / 1000} s: it is far too slow per operation; check its indexes and load`,
      ];
    const verdict = slowStoreVerdict(speed, url, database);
    return verdict ? [verdict] : [];
  } catch (error) {
    return [
      `the record store (${url}) could not be timed on an _id read and update: ${scrubber.describe(error)}; check the store's user may read and update ${database}`,
    ];
  } finally {
    clearTimeout(timer);
  }
}

/** Every problem found, one sentence each; empty when there is none. */
export async function doctorProblems(config: HoldfastConfig, scrubber: Scrubber): Promise<string[]> {
  const uid = process.getuid?.() ?? -1;
  const checks = [
    ...config.providers.map((p) => grantSecretProblems(p, uid)),
    ...config.providers.map((p, i) => backendProblems(p, i, config.source, scrubber)),
    queueProblems(config, scrubber),
    storeProblems(config, scrubber),
  ];
  return (await Promise.all(checks)).flat();
}
