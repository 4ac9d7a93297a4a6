/**
 * A BullMQ worker that runs consumer jobs. A job that finds its consumer locked by another
 * worker, or whose write lost a compare-and-swap, is put back, delayed, not failed: it is
 * retried, never lost, and uses up none of its attempts.
 */
import { DelayedError, Worker } from 'bullmq';
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import { bullConnection, type ConsumerJobData } from '../src/queue/consumer-queue.js';
import type { RedisConnectionConfig } from '../src/config/config.js';
import { processConsumerJob, type JobDeps, type JobOutcome } from './process-consumer-job.js';

export interface ConsumerWorkerOptions {
  connection: RedisConnectionConfig;
  prefix: string;
  name: string;
  concurrency: number;
  scrubber: Scrubber;
}

/** How long a job waits before trying a busy consumer again (jittered). */
const BUSY_RETRY_MS = 250;

export class ConsumerWorker {
  readonly worker: Worker<ConsumerJobData, JobOutcome>;

  constructor(deps: JobDeps, options: ConsumerWorkerOptions, logger: Logger) {
    this.worker = new Worker<ConsumerJobData, JobOutcome>(
      options.name,
      async (job, token) => {
        const outcome = await processConsumerJob(job.data, deps).catch((error: unknown) => {
          if (isHoldfastError(error, 'REVISION_CONFLICT')) return 'conflict' as const;
          throw error;
        });
        if (outcome !== 'done') logger.debug({ consumer: job.data.key, job: job.id, kind: job.data.kind, outcome }, `job ${outcome}`);
        if (outcome === 'busy' || outcome === 'conflict') {
          await job.moveToDelayed(Date.now() + BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS), token);
          throw new DelayedError();
        }
        return outcome;
      },
      {
        connection: bullConnection(options.connection),
        prefix: options.prefix,
        concurrency: options.concurrency,
      },
    );
    this.worker.on('failed', (job, error) => {
      logger.error(
        { consumer: job?.data.key, job: job?.id, attempt: job?.attemptsMade, err: options.scrubber.describe(error) },
        `job failed: ${options.scrubber.describe(error)}`,
      );
    });
    this.worker.on('error', (error) => logger.error({ err: options.scrubber.describe(error) }, `worker error: ${options.scrubber.describe(error)}`));
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async close(): Promise<void> {
    await this.worker.close();
  }
}
