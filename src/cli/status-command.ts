/**
 * `holdfast status`: counts per provider and state, every consumer not served (every one with
 * `--all`), and why it is red; exits 1 when anything is not served. It creates nothing, and
 * names a store or queue Redis it cannot reach within the store's `connectTimeout`.
 */
import { connectCoordination, connectStore } from '../engine/connect.js';
import type { HoldfastConfig } from '../config/config.js';
import { formatDuration } from '../config/duration.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import { formatStatus } from '../status/format-status.js';
import { statusReport, unreachableReport, type StatusReport } from '../status/status-report.js';
import { storeReason } from '../store/store-retry.js';
import { load } from './load.js';

/** A driver's reason in words: `connection refused (connect ECONNREFUSED 127.0.0.1:1)`. */
function inWords(reason: string): string {
  const words: Array<[RegExp, string]> = [
    [/ECONNREFUSED/, 'connection refused'],
    [/ENOTFOUND|EAI_AGAIN/, 'host not found'],
    [/ETIMEDOUT|timed out/i, 'timed out'],
    [/WRONGPASS|NOAUTH|Authentication failed/i, 'authentication failed'],
  ];
  const found = words.find(([pattern]) => pattern.test(reason));
  return found ? `${found[1]} (${reason})` : reason;
}

function queueUrl(config: HoldfastConfig): string {
  const { host, port, db, tls } = config.queue.connection;
  return `${tls ? 'rediss' : 'redis'}://${host.includes(':') ? `[${host}]` : host}:${port}/${db}`;
}

/** The record store's outage as a running worker's watch last saw it (null: none seen, or the queue's Redis cannot say). */
async function storeOutage(config: HoldfastConfig): Promise<{ since: string; reason: string } | null> {
  const { redis, coordination } = connectCoordination(config);
  let timer: NodeJS.Timeout | undefined;
  try {
    // a queue Redis that does not answer is named below, as the status reads it
    const unanswered = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), Math.min(config.store.connectTimeoutMs, 2000))));
    return await Promise.race([coordination.storeOutage(), unanswered]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** The status as read from the configured store and queue Redis; red naming either when it cannot be read. */
export async function readStatus(config: HoldfastConfig, options: { all?: boolean }): Promise<StatusReport> {
  const now = new Date();
  const outage = await storeOutage(config);
  if (outage) {
    return unreachableReport(now, [
      `record store ${config.store.url} does not answer since ${outage.since} (${outage.reason}): no consumer is acted on until it does`,
    ]);
  }
  let connected: Awaited<ReturnType<typeof connectStore>>;
  try {
    connected = await connectStore(config, { create: false });
  } catch (error) {
    if (!isHoldfastError(error, 'STORE_UNAVAILABLE')) throw error;
    return unreachableReport(now, [`record store ${config.store.url} unreachable: ${inWords(storeReason(error.cause ?? error))}`]);
  }
  const { client, store } = connected;
  const { redis, coordination } = connectCoordination(config);
  let lastRedisError: string | undefined;
  redis.on('error', (error: Error) => (lastRedisError = error.message));
  const limit = config.store.connectTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${formatDuration(limit)}`)), limit);
    });
    return await Promise.race([statusReport({ store, coordination, providers: config.providers }, now, options), timeout]);
  } catch (error) {
    if (isHoldfastError(error, 'STORE_UNAVAILABLE')) return unreachableReport(now, [`record store ${config.store.url} unreachable: ${inWords(storeReason(error.cause ?? error))}`]);
    return unreachableReport(now, [`queue Redis ${queueUrl(config)} unreachable: ${inWords(lastRedisError ?? (error instanceof Error ? error.message : String(error)))}`]);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
    await client.close();
  }
}

export async function statusCommand(options: { config?: string; json?: boolean; all?: boolean }): Promise<number> {
  const { config } = await load(options.config, { readOnly: true });
  const report = await readStatus(config, options);
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStatus(report)}\n`);
  return report.healthy ? 0 : 1;
}
