/**
 * A BullMQ worker that runs consumer jobs (see `consumer-job.ts`). A routine check that
 * changed nothing runs its own job again later; a job that finds its consumer busy, or whose
 * write lost a compare-and-swap, is put back, delayed: none of these use up an attempt. A job
 * fails only for what retries cannot fix, and says which consumer, in words.
 */
import { DelayedError, Worker, type Job } from 'bullmq';
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import { bullConnection, type ConsumerJobData } from '../src/queue/consumer-queue.js';
import type { RedisConnectionConfig } from '../src/config/config.js';
import { runConsumerJob, type JobDeps, type JobOutcome } from './consumer-job.js';

export interface ConsumerWorkerOptions {
  connection: RedisConnectionConfig;
  prefix: string;
  name: string;
  concurrency: number;
  scrubber: Scrubber;
  /**
   * Whether an error is explained by the queue's Redis having forgotten its jobs (restarted
   * empty, flushed): a fault said once elsewhere, not once per job.
   */
  queueForgot: () => Promise<boolean>;
}

const CONFLICT_RETRY_MS = 250;
/** Thrown to tell BullMQ the job was put back; one instance, as building an error's stack for every check costs. */
const PUT_BACK = new DelayedError();

export class ConsumerWorker {
  readonly worker: Worker<ConsumerJobData, JobOutcome['kind']>;

  constructor(deps: JobDeps, options: ConsumerWorkerOptions, logger: Logger) {
    const describe = (error: unknown) => options.scrubber.describe(error);
    const later = async (job: Job<ConsumerJobData>, at: number, token: string | undefined): Promise<never> => {
      try {
        await job.moveToDelayed(at, token);
      } catch (error) {
        if (!(await options.queueForgot())) throw error;
      }
      throw PUT_BACK;
    };

    this.worker = new Worker<ConsumerJobData, JobOutcome['kind']>(
      options.name,
      async (job, token) => {
        let outcome: JobOutcome;
        try {
          outcome = await runConsumerJob(job.data, deps);
        } catch (error) {
          if (!isHoldfastError(error, 'REVISION_CONFLICT')) throw error;
          logger.debug({ consumer: job.data.key, job: job.id }, `job put back: ${describe(error)}`);
          return later(job, Date.now() + CONFLICT_RETRY_MS + Math.floor(Math.random() * CONFLICT_RETRY_MS), token);
        }
        if (outcome.kind === 'again' || outcome.kind === 'busy') return later(job, outcome.at.getTime(), token);
        if (outcome.kind !== 'done') logger.debug({ consumer: job.data.key, job: job.id, kind: job.data.kind, outcome: outcome.kind }, `job ${outcome.kind}`);
        return outcome.kind;
      },
      { connection: bullConnection(options.connection), prefix: options.prefix, concurrency: options.concurrency },
    );
    this.worker.on('failed', (job, error) => {
      const final = job === undefined || job.attemptsMade >= (job.opts.attempts ?? 1);
      const what = `job ${job?.id ?? '?'} for ${job?.data.key ?? 'an unknown consumer'} failed${final ? '' : `; attempt ${job?.attemptsMade} of ${job?.opts.attempts}, retried`}: ${describe(error)}`;
      logger[final ? 'error' : 'warn']({ consumer: job?.data.key, job: job?.id, attempt: job?.attemptsMade }, what);
    });
    this.worker.on('error', (error) => {
      void options.queueForgot().then((forgot) => {
        if (!forgot) logger.error({ err: describe(error) }, `worker error: ${describe(error)}`);
      });
    });
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async close(): Promise<void> {
    await this.worker.close();
  }
}
