/** `holdfast status`: every consumer's state; exits 1 when any is not held. */
import { connectCoordination, connectStore } from '../engine/engine.js';
import { formatStatus } from '../status/format-status.js';
import { statusReport } from '../status/status-report.js';
import { load } from './load.js';

export async function statusCommand(options: { config?: string; json?: boolean }): Promise<number> {
  const { config } = await load(options.config);
  const { client, store } = await connectStore(config);
  const { redis, coordination } = connectCoordination(config);
  try {
    const report = await statusReport({ store, coordination, providers: config.providers }, new Date());
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStatus(report)}\n`);
    return report.healthy ? 0 : 1;
  } finally {
    redis.disconnect();
    await client.close();
  }
}
