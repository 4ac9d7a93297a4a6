/**
 * Rounds as BullMQ jobs: per shard, a queue `<name>-rounds` beside the consumers' queue, under
 * the same prefix (so on a Redis Cluster in the same slot). Each job runs one round over the
 * shard's due waits (`workers/due-rounds.ts`) and ends with what it did as its result, so that
 * Bull Board shows the checks and the heals as they happen. No secret: a round's job carries its
 * shard, its result counts.
 */
import { Queue, type JobsOptions } from 'bullmq';
import { shardPrefixes } from '../config/shard-prefixes.js';
import type { BullConnection } from '../queue/bull-connection.js';

/** What a round job carries: the shard it runs a round of. */
export interface RoundJobData {
  shard: number;
}

/** What a round did: a round job's result, as Bull Board shows it. */
export interface RoundReport {
  shard: number;
  /** Waits taken. */
  due: number;
  /** Of them, runs whose check asked the backend, and what they found. */
  checked: number;
  held: number;
  /** Found not held or changed (healed ones too). */
  lost: number;
  /** Found not held and held again in the same run. */
  healed: number;
  couldNotAsk: number;
  /** Taken more than a second after they fell due. */
  late: number;
  /** Runs that threw: handed to the consumers' queue as wait jobs. */
  handedOver: number;
}

/** The rounds' job scheduler id, the same in every process (each upserts it). */
export const ROUND_SCHEDULER = 'rounds';
/** How often the job scheduler makes a round of each shard (ms): the rounds' tick, whatever else makes them. */
export const ROUND_TICK_MS = 1_000;

/** Kept for Bull Board: the last rounds (a few minutes' worth while a heal lasts), failed ones longer. */
export const ROUND_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: { count: 500 },
  removeOnFail: { count: 200 },
  attempts: 1,
};

/** The rounds' queue name beside the consumers' queue `name`. */
export function roundQueueName(name: string): string {
  return `${name}-rounds`;
}

/**
 * The rounds' queues, one per shard (shard `i` at index `i`), on the consumers' queue's connection (its owner ends it).
 */
export class RoundQueues {
  readonly queues: ReadonlyArray<Queue<RoundJobData, RoundReport>>;

  constructor(connection: BullConnection, options: { prefix: string; name: string; shards?: number }) {
    this.queues = shardPrefixes(options.prefix, options.shards ?? 1).map(
      (prefix) =>
        new Queue<RoundJobData, RoundReport>(roundQueueName(options.name), {
          connection: connection.connection,
          prefix,
          defaultJobOptions: ROUND_JOB_OPTIONS,
        }),
    );
  }

  /** Makes sure each shard's scheduler is there (made again after the queue's Redis forgot it). */
  async schedule(): Promise<void> {
    await Promise.all(
      this.queues.map(async (queue, shard) => {
        if (await queue.getJobScheduler(ROUND_SCHEDULER)) return;
        await queue.upsertJobScheduler(
          ROUND_SCHEDULER,
          { every: ROUND_TICK_MS },
          { name: 'round', data: { shard }, opts: ROUND_JOB_OPTIONS },
        );
      }),
    );
  }

  /**
   * A round of `shard` now (more waits are due than the last took), or at `at` (ms; when the next wait falls due: one
   * job per time).
   */
  async add(shard: number, at?: number): Promise<void> {
    const queue = this.queues[shard]!;
    if (at === undefined) await queue.add('round', { shard });
    else await queue.add('round', { shard }, { jobId: `s${shard}-at-${at}`, delay: Math.max(0, at - Date.now()) });
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
