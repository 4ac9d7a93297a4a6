/**
 * Stopping a process's BullMQ workers without hanging on a dead queue node: `Worker.close()` waits
 * for the jobs under way, and a job (or a blocking read) whose command waits on a node that died
 * would keep it waiting for ever. After a grace the queue's connections are cut and the workers
 * closed by force; their jobs' locks expire, and whatever they held is taken again.
 */
import type { Worker } from 'bullmq';
import type { Logger } from '../src/logging/logger.js';
import type { BullConnection } from '../src/queue/bull-connection.js';

/** How long stopping waits for running jobs before it cuts the queue's connections (ms). */
export const CLOSE_GRACE_MS = 15_000;

/** Whether `promise` settled within `ms` (it is left to run either way). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Closes `workers`, waiting `graceMs` for the jobs under way; then cuts `connection` and closes
 * them by force (bounded by the same grace). `what` names the workers in the warning.
 */
export async function closeWorkers(
  workers: readonly Worker[],
  connection: BullConnection,
  logger: Logger,
  what: string,
  graceMs = CLOSE_GRACE_MS,
): Promise<void> {
  if (!(await settlesWithin(Promise.all(workers.map((w) => w.close())), graceMs))) {
    logger.warn(`${what} did not end within ${graceMs / 1000}s of stopping: the queue's connections are cut`);
    connection.end();
    await settlesWithin(Promise.all(workers.map((w) => w.close(true))), graceMs);
  }
  connection.end();
}
