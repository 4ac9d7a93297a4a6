/** `holdfast check <consumer>` and `holdfast reapply <consumer>`: a command event for one consumer. */
import type { CommandEvent } from '../../machines/consumer-events.js';
import { connectStore } from '../engine/engine.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { ConsumerQueue } from '../queue/consumer-queue.js';
import { load } from './load.js';

export async function sendCommand(consumer: string, event: CommandEvent, options: { config?: string }): Promise<void> {
  const { config } = await load(options.config);
  const { client, store } = connectStore(config);
  const queue = new ConsumerQueue(config.queue);
  try {
    await client.connect();
    if (!(await store.get(consumer))) {
      const known = (await store.list()).map((r) => r._id);
      throw new HoldfastError('CONSUMER_UNKNOWN', `no consumer "${consumer}"; known: ${known.slice(0, 20).join(', ') || '(none)'}`);
    }
    await queue.send(consumer, event);
    process.stdout.write(`${event.type} sent to ${consumer}; \`holdfast status\` shows the outcome\n`);
  } finally {
    await queue.close();
    await client.close();
  }
}
