/**
 * A BullMQ worker that runs consumer jobs (see `consumer-job.ts`). A routine check that
 * changed nothing runs its own job again later; a job that finds its consumer busy, or whose
 * write lost a compare-and-swap, is put back, delayed: none of these use up an attempt. A job
 * fails only for what retries cannot fix, and says which consumer, in words.
 */
import { DelayedError, ErrorCode, Worker, type Job } from 'bullmq';
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import { bullConnection } from '../src/queue/bull-connection.js';
import type { ConsumerJobData } from '../src/queue/consumer-queue.js';
import type { RedisConnectionConfig } from '../src/config/config.js';
import { runConsumerJob, STORE_DOWN_RETRY_MS, type JobDeps, type JobOutcome } from './consumer-job.js';
import { putBackAt } from './put-back.js';

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
/** How often, at most, jobs the queue lost track of are said (counted in between). */
const LOST_SAID_EVERY_MS = 60_000;

/**
 * BullMQ's codes for a job it can no longer move once a worker is done with it: its key is
 * gone, its lock is gone or another's, it is not where it was. The
 * consumer's work is done (and safe to do again); only BullMQ's bookkeeping failed: the queue's
 * Redis forgot the job (restarted empty, flushed), or the job outlived its lock.
 */
const LOST_JOB_CODES: ReadonlySet<number> = new Set([ErrorCode.JobNotExist, ErrorCode.JobLockNotExist, ErrorCode.JobNotInState, ErrorCode.JobLockMismatch]);

function lostJob(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && LOST_JOB_CODES.has(code);
}
/** Thrown to tell BullMQ the job was put back; one instance, as building an error's stack for every check costs. */
const PUT_BACK = new DelayedError();

export class ConsumerWorker {
  readonly worker: Worker<ConsumerJobData, JobOutcome['kind']>;

  constructor(deps: JobDeps, options: ConsumerWorkerOptions, logger: Logger) {
    const describe = (error: unknown) => options.scrubber.describe(error);
    let lost = { count: 0, saidAt: 0 };
    /** A job the queue lost track of: counted, and said once a minute at most (a queue that forgot everything is said by the resync). */
    const lose = (error: unknown): void => {
      lost.count++;
      logger.debug({ err: describe(error) }, `the queue lost track of a job: ${describe(error)}`);
      void options.queueForgot().then((forgot) => {
        if (forgot || Date.now() - lost.saidAt < LOST_SAID_EVERY_MS) return;
        logger.warn({ jobs: lost.count }, `the queue lost track of ${lost.count} job(s) after their work was done (its Redis forgot them, or a job outlived its lock); each consumer's next step stays in its record, and the sweep re-creates what is missing`);
        lost = { count: 0, saidAt: Date.now() };
      });
    };
    const later = async (job: Job<ConsumerJobData>, at: number, token: string | undefined): Promise<never> => {
      try {
        await job.moveToDelayed(at, token);
      } catch (error) {
        if (!lostJob(error) && !(await options.queueForgot())) throw error;
        lose(error);
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
          if (isHoldfastError(error, 'STORE_UNAVAILABLE') && deps.storeDown?.()) {
            // the store stopped answering (said once by its watch): put back, no attempt used
            logger.debug({ consumer: job.data.key, job: job.id }, `job put back: ${describe(error)}`);
            return later(job, putBackAt(Date.now(), STORE_DOWN_RETRY_MS), token);
          }
          if (!isHoldfastError(error, 'REVISION_CONFLICT')) throw error;
          logger.debug({ consumer: job.data.key, job: job.id }, `job put back: ${describe(error)}`);
          return later(job, putBackAt(Date.now(), CONFLICT_RETRY_MS), token);
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
      if (lostJob(error)) return lose(error);
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
