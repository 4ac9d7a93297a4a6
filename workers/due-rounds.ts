/**
 * The worker's rounds over the due set (`src/queue/due-waits.ts`): per shard, one loop takes
 * the waits that fell due, up to what it has room for, and runs each as its timer job would run
 * (`consumer-job.ts`: the same trust, lock and routine check), many at once; their locks' claims
 * and releases and their `AUTH`s share round trips. What each run ends with settles its wait in
 * bulk: a routine check that changed nothing leaves it due again after the next interval, a
 * busy consumer a moment later, a run that wrote its record finds it replaced by the wait it
 * scheduled. A run that throws hands its wait to BullMQ as a timer job, whose attempts, backoff
 * and failed list then take over.
 *
 * A wait in a shard not its consumer's (left there when `queue.shards` changed: the sweep puts
 * it in its own) is let go: the record keeps the consumer's next step. One holdfast did not
 * write is run as a wait whose ticket is not used (`due-waits.ts`).
 */
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import type { ConsumerQueue } from '../src/queue/consumer-queue.js';
import type { DueWaits, Settled, TakenWait } from '../src/queue/due-waits.js';
import { shardOf } from '../src/queue/shard-of.js';
import type { JobOutcome } from './job-outcome.js';
import { concurrencyPerShard } from './consumer-worker.js';

/** How long a taken wait is the round's (ms): taken again after it unless settled, as a stalled job is. */
export const LEASE_MS = 30_000;
/** The longest a round sleeps with nothing due (ms): a wait scheduled meanwhile is late by at most this. */
const IDLE_MAX_MS = 100;
/** How long a round waits after the queue's Redis failed it before it tries again (ms). */
const FAILED_PAUSE_MS = 1_000;
/** How often, at most, a failing round is said (ms). */
const FAILED_SAID_EVERY_MS = 60_000;

/** While every job slot is taken, the rounds run at most this share of their limit: the jobs (first applies) go first. */
const GIVE_WAY_SHARE = 1 / 32;
/** How long a full round waits at most before it looks again at how many it may run (ms). */
const RECHECK_MS = 500;

export interface RoundDeps {
  due: Pick<DueWaits, 'shards' | 'take' | 'settle' | 'scheduleWaits'>;
  /** Where a wait whose run threw is handed over. */
  queue: Pick<ConsumerQueue, 'queueWaits'>;
  /** Runs a wait as its timer job (`runConsumerJob`). */
  run: (job: TakenWait['job']) => Promise<JobOutcome>;
  logger: Logger;
  scrubber: Scrubber;
  /** Whether a failure is explained by the queue's Redis having forgotten everything (said once elsewhere). */
  queueForgot: () => Promise<boolean>;
  /** Whether every job slot of the process is taken (`ConsumerWorker.saturated`). */
  jobsSaturated?: () => boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class DueRounds {
  private stopped = false;
  private readonly loops: Array<Promise<void>> = [];
  /** Settlements not sent yet, by shard, sent together once the runs of this turn of the event loop ended. */
  private readonly pending: Settled[][];
  private flushing: Promise<void> | undefined;
  private failedSaidAt = 0;

  constructor(
    private readonly deps: RoundDeps,
    /** How many waits the process runs at once, over every shard. */
    private readonly limit: number,
  ) {
    this.pending = Array.from({ length: deps.due.shards }, () => []);
  }

  start(): void {
    const limits = concurrencyPerShard(this.limit, this.deps.due.shards);
    limits.forEach((limit, shard) => this.loops.push(this.loop(shard, limit)));
  }

  /** Stops taking waits; waits for the runs under way and sends what they settled. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    await this.flush();
  }

  private async loop(shard: number, limit: number): Promise<void> {
    const running = new Set<Promise<void>>();
    while (!this.stopped) {
      if (running.size >= this.room(limit)) {
        await Promise.race([...running, sleep(RECHECK_MS)]);
        continue;
      }
      const now = Date.now();
      try {
        const { taken, nextAt } = await this.deps.due.take(shard, now, now + LEASE_MS, this.room(limit) - running.size);
        for (const wait of taken) {
          const run: Promise<void> = this.run(shard, wait).finally(() => running.delete(run));
          running.add(run);
        }
        if (taken.length === 0) await sleep(Math.min(IDLE_MAX_MS, Math.max(5, (nextAt ?? Infinity) - Date.now())));
      } catch (error) {
        await this.failed(error);
        await sleep(FAILED_PAUSE_MS);
      }
    }
    await Promise.allSettled(running);
  }

  /**
   * How many waits a round may run at once: its limit, unless every job slot is taken (a bulk of
   * first applies), when the jobs go first and the waits keep a small share: a consumer not
   * applied yet is unserved, one whose check is late most likely is not. On a CPU that has room,
   * that share still runs thousands of checks a second (each run waits on Redis, not on the CPU);
   * on one that has none, the applies get it.
   */
  private room(limit: number): number {
    return this.deps.jobsSaturated?.() ? Math.max(1, Math.ceil(limit * GIVE_WAY_SHARE)) : limit;
  }

  /** Runs one wait as its job, and notes how it settles. */
  private async run(shard: number, wait: TakenWait): Promise<void> {
    const { key, epoch } = wait;
    if (shardOf(key, this.deps.due.shards) !== shard) return this.settle(shard, { key, epoch, at: null });
    try {
      const outcome = await this.deps.run(wait.job);
      // the record was read: its ticket replaces what the wait carried (the same, unless written by hand)
      if (outcome.kind === 'later' && outcome.ticket) await this.deps.due.scheduleWaits([{ key, timer: { wait: wait.job.wait, epoch: wait.job.epoch, dueAt: outcome.at }, ticket: outcome.ticket }]);
      this.settle(shard, { key, epoch, at: outcome.kind === 'later' ? outcome.at.getTime() : null });
    } catch (error) {
      await this.handOver(shard, wait, error);
    }
  }

  /** A run that threw: its wait becomes a timer job, for BullMQ's retries; let go here once the job is there. */
  private async handOver(shard: number, { key, epoch, job }: TakenWait, error: unknown): Promise<void> {
    this.deps.logger.debug({ consumer: key }, `a due wait's run failed, handed to the queue as a job: ${this.deps.scrubber.describe(error)}`);
    try {
      // with the seal it came with: the job is judged as the wait was (a ticket written by hand stays unsealed)
      await this.deps.queue.queueWaits([{ key, timer: { wait: job.wait, epoch: job.epoch, dueAt: new Date() }, ticket: job.ticket, seal: job.seal }]);
      this.settle(shard, { key, epoch, at: null });
    } catch (failure) {
      await this.failed(failure); // left leased: taken again when the lease ends
    }
  }

  private settle(shard: number, settled: Settled): void {
    this.pending[shard]!.push(settled);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Sends every shard's settlements, one script call each; a failure leaves them leased, taken again later. */
  private async flush(): Promise<void> {
    this.flushing = undefined;
    const batches = this.pending.map((list, shard) => [shard, list.splice(0)] as const).filter(([, list]) => list.length > 0);
    await Promise.all(batches.map(([shard, list]) => this.deps.due.settle(shard, list).catch((error: unknown) => this.failed(error))));
  }

  private async failed(error: unknown): Promise<void> {
    if (await this.deps.queueForgot().catch(() => false)) return;
    if (Date.now() - this.failedSaidAt < FAILED_SAID_EVERY_MS) return;
    this.failedSaidAt = Date.now();
    this.deps.logger.warn({ err: this.deps.scrubber.describe(error) }, `a round over the due waits failed: ${this.deps.scrubber.describe(error)}; tried again every ${FAILED_PAUSE_MS / 1000}s (said once a minute at most)`);
  }
}
