/**
 * A BullMQ worker that runs consumer jobs (see `consumer-job.ts`). A job whose outcome is
 * `later` (a busy consumer, a lost compare-and-swap, a store that does not answer) is put back,
 * delayed, without using up an attempt; a wait job (a wait a round handed over) settles as a
 * round's wait does (`wait-settlement.ts`): due again in the due set, where the rounds take it
 * (`due-rounds.ts`), or done with. A job fails
 * only for what retries cannot fix, and says which consumer, in words.
 *
 * With `queue.shards: N` it runs one BullMQ worker per shard's queue, `concurrency` split
 * between them as evenly as it goes (at least one each): consumers spread evenly over the
 * shards, so the process runs about as many jobs at once as with one queue. A job found in a
 * shard that is not its consumer's (left there when `queue.shards` changed) is dropped as stale
 * before anything is asked: the consumer's next step is in its record, and the sweep put it in
 * the consumer's own shard, where its lock is.
 */
import { DelayedError, ErrorCode, Worker, type Job } from 'bullmq';
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import { bullConnection, type BullConnection } from '../src/queue/bull-connection.js';
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';
import { jobDataOf } from '../src/schedule/job-data.js';
import type { QueueConnectionConfig } from '../src/config/config.js';
import { shardPrefixes } from '../src/config/shard-prefixes.js';
import { shardOf } from '../src/queue/shard-of.js';
import type { WaitScheduler } from '../src/schedule/due-waits.js';
import { runConsumerJob, type JobDeps, type JobOutcome } from './consumer-job.js';
import { settleWait } from './wait-settlement.js';
import { RATE_LIMIT_RECHECK_MS } from '../src/queue/queue-controls.js';
import { closeWorkers } from './close-workers.js';

export interface ConsumerWorkerOptions {
  connection: QueueConnectionConfig;
  prefix: string;
  name: string;
  /** How many shards the queue has (default 1; see `queue.shards`). */
  shards?: number;
  /** Jobs the process runs at once, over every shard. */
  concurrency: number;
  scrubber: Scrubber;
  /**
   * Whether an error is explained by the queue's Redis having forgotten its jobs (restarted
   * empty, flushed): a fault said once elsewhere, not once per job.
   */
  queueForgot: () => Promise<boolean>;
  /** Where a wait job's wait goes once its routine check changed nothing: the due set, taken by the rounds. */
  waits: WaitScheduler;
}

/** What a job that is not put back returns to BullMQ. */
type Finished = Exclude<JobOutcome['kind'], 'later'>;

/** How often, at most, jobs the queue lost track of are said (counted in between). */
const LOST_SAID_EVERY_MS = 60_000;

/**
 * BullMQ's codes for a job it can no longer move once a worker is done with it: its key is
 * gone, its lock is gone or another's, it is not where it was. The
 * consumer's work is done (and safe to do again); only BullMQ's bookkeeping failed: the queue's
 * Redis forgot the job (restarted empty, flushed), or the job outlived its lock.
 */
const LOST_JOB_CODES: ReadonlySet<number> = new Set([
  ErrorCode.JobNotExist,
  ErrorCode.JobLockNotExist,
  ErrorCode.JobNotInState,
  ErrorCode.JobLockMismatch,
]);

function lostJob(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && LOST_JOB_CODES.has(code);
}
/** Thrown to tell BullMQ the job was put back; one instance, as building an error's stack for every check costs. */
const PUT_BACK = new DelayedError();

/** `concurrency` split over `shards` workers as evenly as it goes, at least one each. */
export function concurrencyPerShard(concurrency: number, shards: number): number[] {
  return Array.from({ length: shards }, (_, i) =>
    Math.max(1, Math.floor(concurrency / shards) + (i < concurrency % shards ? 1 : 0)),
  );
}

export class ConsumerWorker {
  /** One BullMQ worker per shard, shard `i` at index `i`. */
  readonly workers: ReadonlyArray<Worker<ConsumerJobData, Finished>>;

  private readonly connection: BullConnection;

  /** Jobs the queue lost track of since that was last said. */
  private lost = { count: 0, saidAt: 0 };

  /** Jobs running now, over every shard. */
  private running = 0;

  private readonly shards: number;

  constructor(
    private readonly deps: JobDeps,
    private readonly options: ConsumerWorkerOptions,
    private readonly logger: Logger,
  ) {
    this.connection = bullConnection(options.connection);
    const prefixes = shardPrefixes(options.prefix, options.shards ?? 1);
    this.shards = prefixes.length;
    const concurrency = concurrencyPerShard(options.concurrency, prefixes.length);
    this.workers = prefixes.map((prefix, shard) => this.shardWorker(prefix, shard, concurrency[shard]!));
  }

  private shardWorker(prefix: string, shard: number, concurrency: number): Worker<ConsumerJobData, Finished> {
    const { options, logger } = this;
    const worker = new Worker<ConsumerJobData, Finished>(
      options.name,
      (job, token) => this.process(job, token, shard),
      {
        connection: this.connection.connection,
        prefix,
        // a rate limit set from outside is undone by holdfast: asked again soon after, not after 30 s
        maximumRateLimitDelay: RATE_LIMIT_RECHECK_MS,
        concurrency,
      },
    );
    worker.on('failed', (job, error) => this.failed(job, error));
    worker.on('error', (error) => {
      if (lostJob(error)) return this.lose(error);
      void options.queueForgot().then((forgot) => {
        if (!forgot) logger.error({ err: this.describe(error) }, `worker error: ${this.describe(error)}`);
      });
    });
    return worker;
  }

  /** Whether every job slot of the process is taken (jobs may be waiting for one). */
  get saturated(): boolean {
    return this.running >= this.options.concurrency;
  }

  private async process(job: Job<ConsumerJobData>, token: string | undefined, shard: number): Promise<Finished> {
    this.running++;
    try {
      return await this.processIn(job, token, shard);
    } finally {
      this.running--;
    }
  }

  private async processIn(job: Job<ConsumerJobData>, token: string | undefined, shard: number): Promise<Finished> {
    const home = typeof job.data?.key === 'string' ? shardOf(job.data.key, this.shards) : shard;
    if (home !== shard) {
      this.logger.debug(
        { consumer: job.data.key, job: job.id },
        `job dropped as stale: it is in shard ${shard}, its consumer's shard is ${home} (queue.shards changed)`,
      );
      return 'stale';
    }
    const data = jobDataOf(job.data);
    const outcome = await runConsumerJob(data, this.deps);
    if (outcome.kind === 'later' && outcome.error !== undefined)
      this.logger.debug({ consumer: job.data.key, job: job.id }, `job put back: ${this.describe(outcome.error)}`);
    if (data.kind === 'wait') {
      // a wait handed over by a round (or from before the due set) settles as a round's does: due
      // again in the due set, or done with
      await settleWait(data, outcome, this.options.waits, false);
      return outcome.kind === 'later' ? 'done' : outcome.kind;
    }
    // put back, no attempt used
    if (outcome.kind === 'later') return this.later(job, outcome.at.getTime(), token);
    if (outcome.kind !== 'done')
      this.logger.debug(
        { consumer: data.key, job: job.id, kind: data.kind, outcome: outcome.kind },
        `job ${outcome.kind}`,
      );
    return outcome.kind;
  }

  /** Puts the job back until `at`, without using an attempt. */
  private async later(job: Job<ConsumerJobData>, at: number, token: string | undefined): Promise<never> {
    try {
      await job.moveToDelayed(at, token);
    } catch (error) {
      if (!lostJob(error) && !(await this.options.queueForgot())) throw error;
      this.lose(error);
    }
    throw PUT_BACK;
  }

  /**
   * A job the queue lost track of: counted, and said once a minute at most (a queue that forgot everything is said by
   * the sweeper).
   */
  private lose(error: unknown): void {
    this.lost.count++;
    this.logger.debug({ err: this.describe(error) }, `the queue lost track of a job: ${this.describe(error)}`);
    void this.options.queueForgot().then((forgot) => {
      if (forgot || Date.now() - this.lost.saidAt < LOST_SAID_EVERY_MS) return;
      this.logger.warn(
        { jobs: this.lost.count },
        `the queue lost track of ${this.lost.count} job(s) after their work was done (its Redis forgot them, or a job outlived its lock); each consumer's next step stays in its record, and the sweep re-creates what is missing`,
      );
      this.lost = { count: 0, saidAt: Date.now() };
    });
  }

  private failed(job: Job<ConsumerJobData> | undefined, error: Error): void {
    const final = job === undefined || job.attemptsMade >= (job.opts.attempts ?? 1);
    const what = `job ${job?.id ?? '?'} for ${job?.data.key ?? 'an unknown consumer'} failed${final ? '' : `; attempt ${job?.attemptsMade} of ${job?.opts.attempts}, retried`}: ${this.describe(error)}`;
    this.logger[final ? 'error' : 'warn']({ consumer: job?.data.key, job: job?.id, attempt: job?.attemptsMade }, what);
  }

  private describe(error: unknown): string {
    return this.options.scrubber.describe(error);
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async close(): Promise<void> {
    // a job whose command waits on a queue node that died is not waited for: its lock expires, and the sweep redoes its record
    await closeWorkers(this.workers, this.connection, this.logger, 'running jobs');
  }
}
