/**
 * The worker of the rounds' jobs (`src/schedule/round-jobs.ts`): per shard, a BullMQ worker whose
 * job runs one round (`due-rounds.ts`) and returns what it did. BullMQ schedules the rounds: its
 * job scheduler makes one a second per shard; a round that left waits due behind adds the next
 * at once, before it runs its own, and any process's free slot takes it (so the rounds fan out
 * over processes and slots while a heal lasts); one that left none adds one for when the next
 * wait falls due, when that is before the next tick. A process that dies mid-round leaves its
 * round job stalled (BullMQ takes it back) and its waits leased (taken again when the lease ends).
 */
import { Worker, type Job } from 'bullmq';
import type { QueueConnectionConfig } from '../src/config/config.js';
import { shardPrefixes } from '../src/config/shard-prefixes.js';
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import { bullConnection, type BullConnection } from '../src/queue/bull-connection.js';
import {
  ROUND_TICK_MS,
  roundQueueName,
  type RoundJobData,
  type RoundQueues,
  type RoundReport,
} from '../src/schedule/round-jobs.js';
import { CLOSE_GRACE_MS, closeWorkers, settlesWithin } from './close-workers.js';
import { DueRounds, ROUNDS_AT_ONCE, type RoundDeps } from './due-rounds.js';
import { RATE_LIMIT_RECHECK_MS } from '../src/queue/queue-controls.js';

export interface RoundWorkerOptions {
  connection: QueueConnectionConfig;
  prefix: string;
  name: string;
  shards: number;
  /** What the rounds run with (`due-rounds.ts`); their failures are told here. */
  rounds: Omit<RoundDeps, 'failed' | 'logger' | 'scrubber'>;
  /** How many waits the process runs at once, over every shard. */
  limit: number;
  queues: RoundQueues;
  logger: Logger;
  scrubber: Scrubber;
  /** Whether a failure is explained by the queue's Redis having forgotten everything (said once elsewhere). */
  queueForgot: () => Promise<boolean>;
}

/** How often the scheduler is looked for, and made again if the queue's Redis forgot it (ms). */
const SCHEDULER_CHECK_MS = 10_000;
/** How often, at most, failing rounds are said (ms). */
const FAILED_SAID_EVERY_MS = 60_000;

export class RoundWorker {
  private readonly workers: Array<Worker<RoundJobData, RoundReport>>;
  private readonly connection: BullConnection;
  private readonly timer: NodeJS.Timeout;
  private readonly rounds: DueRounds;
  private failedSaidAt = 0;

  constructor(private readonly options: RoundWorkerOptions) {
    const { logger, scrubber } = options;
    this.rounds = new DueRounds(
      { ...options.rounds, logger, scrubber, failed: (error) => void this.failed(error) },
      options.limit,
    );
    this.connection = bullConnection(options.connection);
    this.workers = shardPrefixes(options.prefix, options.shards).map((prefix, shard) => {
      const worker = new Worker<RoundJobData, RoundReport>(
        roundQueueName(options.name),
        (job) => this.round(job, shard),
        {
          connection: this.connection.connection,
          prefix,
          // a rate limit set from outside is undone by holdfast: asked again soon after, not after 30 s
          maximumRateLimitDelay: RATE_LIMIT_RECHECK_MS,
          concurrency: ROUNDS_AT_ONCE,
        },
      );
      worker.on('failed', (_job, error) => void this.failed(error));
      worker.on('error', (error) => void this.failed(error));
      return worker;
    });
    this.timer = setInterval(() => void this.schedule(), SCHEDULER_CHECK_MS).unref();
    void this.schedule();
  }

  /** One round of the job's shard (the worker's own: a job of another shard's data is run for the worker's shard). */
  private round(_job: Job<RoundJobData, RoundReport>, shard: number): Promise<RoundReport> {
    const { queues } = this.options;
    return this.rounds.round(shard, ({ more, nextAt }) => {
      const next = more
        ? queues.add(shard)
        : nextAt !== null && nextAt < Date.now() + ROUND_TICK_MS
          ? queues.add(shard, nextAt)
          : undefined;
      void next?.catch((error: unknown) => this.failed(error));
    });
  }

  private async schedule(): Promise<void> {
    await this.options.queues.schedule().catch((error: unknown) => this.failed(error));
  }

  private async failed(error: unknown): Promise<void> {
    if (await this.options.queueForgot().catch(() => false)) return;
    if (Date.now() - this.failedSaidAt < FAILED_SAID_EVERY_MS) return;
    this.failedSaidAt = Date.now();
    const why = this.options.scrubber.describe(error);
    this.options.logger.warn(
      { err: why },
      `a round over the due waits failed: ${why}; its waits are taken again when their lease ends, and the next round comes within ${ROUND_TICK_MS / 1000}s (said once a minute at most)`,
    );
  }

  /** Stops taking rounds, waits for those under way, and sends what they settled. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await closeWorkers(this.workers, this.connection, this.options.logger, 'rounds under way');
    // what the last rounds settled goes to the shards that answer; a dead one's waits are taken again when their lease ends
    await settlesWithin(this.rounds.stop(), CLOSE_GRACE_MS);
  }
}
