/** `holdfast check <consumer>` and `holdfast reapply <consumer>`: a command event for one consumer. */
import { connectStore } from '../engine/engine.js';
import { HoldfastError } from '../errors/holdfast-error.js';
import { ConsumerQueue, type JobCommand } from '../schedule/consumer-queue.js';
import { JobSeal } from '../queue/job-seal.js';
import { load } from './load.js';
import { printOut } from '../text/terminal-text.js';

export async function sendCommand(consumer: string, event: JobCommand, options: { config?: string }): Promise<void> {
  const { config } = await load(options.config);
  const { client, store } = await connectStore(config);
  const queue = new ConsumerQueue({ ...config.queue, seal: new JobSeal(config.fingerprintKey) });
  try {
    if (!(await store.get(consumer))) {
      const known: string[] = [];
      for await (const record of store.scan()) if (known.push(record._id) >= 20) break;
      throw new HoldfastError(
        'CONSUMER_UNKNOWN',
        `no consumer "${consumer}"; known: ${known.sort().join(', ') || '(none)'}${known.length >= 20 ? ', …' : ''}`,
      );
    }
    await queue.send(consumer, event);
    printOut(`${event.type} sent to ${consumer}; \`holdfast status\` shows the outcome\n`);
  } finally {
    await queue.close();
    await client.close();
  }
}
