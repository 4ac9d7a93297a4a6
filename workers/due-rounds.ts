/**
 * A round over the due set (`src/schedule/due-waits.ts`): it takes one shard's waits that fell
 * due, up to its size, and runs each as its wait job would run (`consumer-job.ts`: the same
 * trust, lock and routine check), all at once; their locks' claims and releases and their
 * `AUTH`s share round trips. Each run's outcome settles its wait (`wait-settlement.ts`), and the
 * settlements of one turn of the event loop go to the queue's Redis together. A run that throws
 * hands its wait to BullMQ as a wait job, whose attempts, backoff and failed list take over. A
 * round is a BullMQ job (`round-worker.ts`), and what it counts is that job's result.
 *
 * A wait in a shard not its consumer's (left there when `queue.shards` changed: the sweep puts
 * it in its own) is let go: the record keeps the consumer's next step. One holdfast did not
 * write is run as a wait whose ticket is not used (`due-waits.ts`).
 */
import type { Logger } from '../src/logging/logger.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import type { ConsumerQueue } from '../src/schedule/consumer-queue.js';
import type { DueWaits, Settled, TakenWait } from '../src/schedule/due-waits.js';
import type { RoundReport } from '../src/schedule/round-jobs.js';
import { shardOf } from '../src/queue/shard-of.js';
import type { JobOutcome } from './job-outcome.js';
import { concurrencyPerShard } from './consumer-worker.js';
import type { Ran, RanEach } from './round-checks.js';
import { settleTaken } from './wait-settlement.js';

/** How long a taken wait is the round's (ms): taken again after it unless settled, as a stalled job is. */
export const LEASE_MS = 30_000;
/** A wait taken more than this after it fell due (ms) is counted late (`RoundReport.late`). */
export const LATE_MS = 1_000;
/** How many rounds of one shard a process runs at once: its share of the limit is split between them. */
export const ROUNDS_AT_ONCE = 4;
/**
 * While every job slot is taken, the process's rounds run at most this share of its limit at once: the jobs (first
 * applies) go first.
 */
const GIVE_WAY_SHARE = 1 / 32;

export interface RoundDeps {
  due: Pick<DueWaits, 'shards' | 'take' | 'settle' | 'scheduleWaits'>;
  /** Where a wait whose run threw is handed over. */
  queue: Pick<ConsumerQueue, 'queueWaits'>;
  /** Runs a wait as its wait job (`runConsumerJob`). */
  run: (job: TakenWait['job']) => Promise<JobOutcome>;
  /**
   * Runs a round's waits together (`round-checks.ts`), telling of each as it ends; without it, each is {@link run} on
   * its own.
   */
  runMany?: (jobs: ReadonlyArray<TakenWait['job']>, ran: RanEach) => Promise<void>;
  logger: Logger;
  scrubber: Scrubber;
  /** Where what could not be sent is told (the round worker's: said once a minute at most). */
  failed: (error: unknown) => void;
  /** Whether every job slot of the process is taken (`ConsumerWorker.saturated`). */
  jobsSaturated?: () => boolean;
}

/**
 * What the round tells the one that runs it once it has taken its waits (giving way: once they
 * ran): whether more are due now, and when the next falls due.
 */
export type OnTaken = (taken: { more: boolean; nextAt: number | null }) => void;

export class DueRounds {
  /** Settlements not sent yet, by shard, sent together once the runs of this turn of the event loop ended. */
  private readonly pending: Settled[][];
  private flushing: Promise<void> | undefined;
  private readonly sizes: number[];
  /** How many waits the process's rounds may run at once while every job slot is taken. */
  private readonly givingWay: number;
  /** Waits the process's rounds are running now. */
  private running = 0;

  constructor(
    private readonly deps: RoundDeps,
    /** How many waits the process runs at once, over every shard. */
    limit: number,
  ) {
    this.pending = Array.from({ length: deps.due.shards }, () => []);
    this.sizes = concurrencyPerShard(limit, deps.due.shards).map((n) => Math.max(1, Math.ceil(n / ROUNDS_AT_ONCE)));
    this.givingWay = Math.max(1, Math.ceil(limit * GIVE_WAY_SHARE));
  }

  /** Runs one round of shard `shard`: takes its due waits, runs them, settles them; what it did. */
  async round(shard: number, onTaken?: OnTaken): Promise<RoundReport> {
    const report: RoundReport = {
      shard,
      due: 0,
      checked: 0,
      held: 0,
      lost: 0,
      healed: 0,
      couldNotAsk: 0,
      late: 0,
      handedOver: 0,
    };
    const givingWay = this.deps.jobsSaturated?.() ?? false;
    const size = this.size(shard, givingWay);
    if (size === 0) return report; // giving way, and the rounds under way use the room: they go on
    const now = Date.now();
    const { taken, nextAt } = await this.deps.due.take(shard, now, now + LEASE_MS, size);
    const next = { more: taken.length === size || (nextAt !== null && nextAt <= Date.now()), nextAt };
    // the next round at once, to fan out; giving way, only once this one's runs ended (one after another)
    if (!givingWay) onTaken?.(next);
    report.due = taken.length;
    this.running += taken.length;
    const runs: TakenWait[] = [];
    for (const wait of taken) {
      // a wait in a shard not its consumer's is let go unrun
      if (shardOf(wait.key, this.deps.due.shards) !== shard) {
        this.ended(shard, { key: wait.key, rev: wait.rev, at: null });
        continue;
      }
      if (now - wait.dueAt > LATE_MS) report.late++;
      runs.push(wait);
    }
    const settling: Array<Promise<void>> = [];
    await this.runAll(runs, (at, ran) => {
      const settled = this.settleRun(shard, runs[at]!, ran, report);
      if (settled) settling.push(settled);
    });
    await Promise.all(settling);
    if (givingWay) onTaken?.(next);
    await this.flushing;
    return report;
  }

  /** Sends what is not sent yet (a stopping process, after its last rounds). */
  async stop(): Promise<void> {
    await this.flush();
  }

  /**
   * A round's size: its share of the limit, unless every job slot is taken (a bulk of first
   * applies), when the jobs go first and the rounds keep a small share of the limit, over all of
   * them: a consumer not applied yet is unserved, one whose check is late most likely is not.
   */
  private size(shard: number, givingWay: boolean): number {
    const size = this.sizes[shard]!;
    return givingWay ? Math.max(0, Math.min(size, this.givingWay - this.running)) : size;
  }

  /** Runs the round's waits: together (`runMany`), else each as its own job. */
  private runAll(waits: readonly TakenWait[], ran: RanEach): Promise<void> {
    const jobs = waits.map((wait) => wait.job);
    if (this.deps.runMany) return this.deps.runMany(jobs, ran);
    return Promise.all(
      jobs.map((job, at) =>
        this.deps.run(job).then(
          (outcome) => ran(at, { outcome }),
          (error: unknown) => ran(at, { error }),
        ),
      ),
    ).then(() => undefined);
  }

  /**
   * A wait's run ended: what it found counted, and how it settles noted; one that threw is handed over. A promise only
   * when settling it waits for something (a wait scheduled anew, a hand-over).
   */
  private settleRun(shard: number, wait: TakenWait, ran: Ran, report: RoundReport): Promise<void> | undefined {
    const { key, rev } = wait;
    if ('error' in ran) return this.failedRun(shard, wait, ran.error, report);
    count(report, ran.outcome);
    try {
      const at = settleTaken(wait.job, ran.outcome, this.deps.due);
      if (!(at instanceof Promise)) return void this.ended(shard, { key, rev, at });
      return at.then(
        (dueAt) => this.ended(shard, { key, rev, at: dueAt }),
        (error: unknown) => this.failedRun(shard, wait, error, report),
      );
    } catch (error) {
      return this.failedRun(shard, wait, error, report);
    }
  }

  private failedRun(shard: number, wait: TakenWait, error: unknown, report: RoundReport): Promise<void> {
    report.handedOver++;
    this.running--;
    return this.handOver(shard, wait, error);
  }

  /** A wait done with here: its settlement noted, its room given back. */
  private ended(shard: number, settled: Settled): void {
    this.running--;
    this.settle(shard, settled);
  }

  /** A run that threw: its wait becomes a wait job, for BullMQ's retries; let go here once the job is there. */
  private async handOver(shard: number, { key, rev, job }: TakenWait, error: unknown): Promise<void> {
    this.deps.logger.debug(
      { consumer: key },
      `a due wait's run failed, handed to the queue as a job: ${this.deps.scrubber.describe(error)}`,
    );
    // with the seal it came with: the job is judged as the wait was (a ticket written by hand stays
    // unsealed); a failure leaves it leased, taken again when the lease ends
    try {
      await this.deps.queue.queueWaits([
        { key, timer: { wait: job.wait, rev: job.rev, dueAt: new Date() }, ticket: job.ticket, seal: job.seal },
      ]);
      this.settle(shard, { key, rev, at: null });
    } catch (failure) {
      this.deps.failed(failure); // left leased: taken again when the lease ends
    }
  }

  private settle(shard: number, settled: Settled): void {
    this.pending[shard]!.push(settled);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Sends every shard's settlements, one script call each; a failure leaves them leased, taken again later. */
  private async flush(): Promise<void> {
    this.flushing = undefined;
    const batches = this.pending
      .map((list, shard) => [shard, list.splice(0)] as const)
      .filter(([, list]) => list.length > 0);
    await Promise.all(
      batches.map(([shard, list]) =>
        this.deps.due.settle(shard, list).catch((error: unknown) => this.deps.failed(error)),
      ),
    );
  }
}

function count(report: RoundReport, { found }: JobOutcome): void {
  if (found === undefined) return;
  report.checked++;
  if (found === 'held') report.held++;
  else if (found === 'could-not-ask') report.couldNotAsk++;
  else {
    report.lost++;
    if (found === 'healed') report.healed++;
  }
}
