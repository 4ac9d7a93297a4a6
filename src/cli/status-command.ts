/** `holdfast status`: every consumer's state; exits 1 when any is not held. */
import { connectCoordination, connectStore } from '../engine/engine.js';
import { formatStatus } from '../status/format-status.js';
import { statusReport } from '../status/status-report.js';
import { load } from './load.js';

export async function statusCommand(options: { config?: string; json?: boolean }): Promise<number> {
  const { config } = await load(options.config);
  const { redis, coordination } = connectCoordination(config);
  // a worker's watch says the record store does not answer: say so at once rather than wait for it
  const outage = await coordination.storeOutage().catch(() => null);
  if (outage) {
    redis.disconnect();
    process.stdout.write(`NOT HEALTHY: the record store at ${config.store.url} does not answer since ${outage.since} (${outage.reason}); no consumer is acted on until it does\n`);
    return 1;
  }
  let connected;
  try {
    connected = await connectStore(config);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const { client, store } = connected;
  try {
    const report = await statusReport({ store, coordination, providers: config.providers }, new Date());
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStatus(report)}\n`);
    return report.healthy ? 0 : 1;
  } finally {
    redis.disconnect();
    await client.close();
  }
}
