/**
 * `holdfast history <consumer> [--json] [--since 24h]`: every transition of one consumer holdfast
 * still keeps, oldest first, with its time, reason, cause and node, and how far back that goes
 * (`history/consumer-history.ts`). Reads the record store and the queue's Redis; reaches no
 * backend and writes nothing.
 */
import { DESCRIBED_ADAPTERS } from '../adapters/described-registry.js';
import { connectCoordination, connectStore } from '../engine/connect.js';
import { formatHistory } from '../history/format-history.js';
import { readHistory } from '../history/read-history.js';
import { consumerKeyInput } from '../store/consumer-key-input.js';
import { printOut } from '../text/terminal-text.js';
import { load } from './load.js';

export async function historyCommand(
  consumer: string,
  options: { config?: string; json?: boolean; sinceMs?: number },
): Promise<void> {
  consumerKeyInput(consumer); // a bad key is said before anything is read or reached
  const { config } = await load(options.config, { readOnly: true, adapters: DESCRIBED_ADAPTERS });
  const { client, store } = await connectStore(config, { create: false });
  const { redis, coordination } = connectCoordination(config, {
    maxRetriesPerRequest: 1,
    retryStrategy: (n) => (n > 3 ? null : 200),
  });
  try {
    const since = options.sinceMs === undefined ? null : Date.now() - options.sinceMs;
    const history = await readHistory(
      { store, reads: coordination.notes, nodeEvents: coordination.signals },
      consumer,
      since,
    );
    printOut(options.json ? `${JSON.stringify(history, null, 2)}\n` : `${formatHistory(history)}\n`);
  } finally {
    redis.disconnect();
    await client.close();
  }
}
