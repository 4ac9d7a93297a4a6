/**
 * The scheduler can forget too: the queue's Redis may restart empty. Every record knows its
 * consumer's wait, so a sweep re-creates any job the queue lost, reading every record once:
 *
 * - the record's wait, in the due set at the record's revision (one there at that revision or a
 *   later one is left alone); a wait
 *   already overdue is spread over one `verifyEvery`, not all due at once;
 * - for a record left mid-effect past its deadline (its worker died), a job that resumes it.
 *
 * Each record read is also noted in brief in the queue's Redis, for the status. A record this
 * holdfast cannot read (a newer version's, or damaged) is noted unreadable, said once, and left
 * alone.
 *
 * Once the desired-state sync runs, a sweep also hands it each record whose consumer is no
 * longer declared, for its removal to be delivered again (`DesiredSync.removeUndeclared`).
 *
 * A sweep runs at start-up, every `sweepEvery` (rare: it reads every record), and at once
 * when the queue's sentinel is gone (checked every `sentinelEvery`, one cheap Redis call),
 * which is said once. Each check of the queue also undoes a pause, a global rate limit or a global
 * concurrency set on holdfast's queues from outside (`queue-controls.ts`).
 */
import { EFFECT_STATES } from '../../machines/consumer-machine.js';
import { unitHash } from '../../machines/delays.js';
import type { Timing } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { QueueSentinel, BriefNotes } from '../queue/coordination.js';
import type { LayoutSettling } from '../queue/sharded-coordination.js';
import { checkTicket, type ConsumerQueue, type ScheduledWait } from '../schedule/consumer-queue.js';
import type { WaitScheduler } from '../schedule/due-waits.js';
import type { ConsumerBrief } from '../queue/consumer-brief.js';
import { briefOf, unreadableBrief } from '../queue/brief-of.js';
import { isUnreadable, type ConsumerRecord, type UnreadableRecord } from '../store/consumer-record.js';
import type { ConsumerStore } from '../store/consumer-store.js';

/** What the sweep does with records whose consumers are no longer declared (the desired-state sync). */
export interface UndeclaredRecords {
  isUndeclared(record: ConsumerRecord): boolean;
  /** Delivers their removal again (judged again, under the removal guard). */
  removeUndeclared(records: readonly ConsumerRecord[]): Promise<void>;
}

export interface SweeperOptions {
  store: Pick<ConsumerStore, 'scan'>;
  /** Where the records' waits are scheduled again (the due set). */
  waits: WaitScheduler;
  queue: Pick<ConsumerQueue, 'redo'>;
  /** The sentinel, the records' briefs, and the layout written again with the sentinel. */
  coordination: {
    readonly signals: QueueSentinel;
    readonly notes: BriefNotes;
    readonly layout: Pick<LayoutSettling, 'markSettled'>;
  };
  /** Each provider's timing, by name. */
  timing: ReadonlyMap<string, Timing>;
  /** What stops or throttles the queues from outside, undone at each check of the queue. */
  controls?: { restore(): Promise<unknown> };
  logger: Logger;
  now: () => Date;
  sentinelEveryMs: number;
  sweepEveryMs: number;
}

const BATCH = 500;

export class Sweeper {
  private readonly timers: NodeJS.Timeout[] = [];
  private sweeping: Promise<number> | undefined;
  private lost = false;
  /** The unreadable records already said, by key (forgotten once readable). */
  private readonly saidUnreadable = new Set<string>();

  constructor(private readonly options: SweeperOptions) {}

  /** The sync, once started: each sweep then removes again the records of consumers no longer declared. */
  private undeclared: UndeclaredRecords | undefined;

  /**
   * Keeps checking the queue's sentinel and sweeping now and then (the first sweep is the
   * caller's); each sweep from now on hands the records of consumers no longer declared to
   * `undeclared`, as the start-up does: a backstop for a removal lost while the process runs.
   */
  start(undeclared?: UndeclaredRecords): void {
    this.undeclared = undeclared;
    const { logger } = this.options;
    const safely = (what: string, run: () => Promise<unknown>) => () => {
      void run().catch((error: unknown) => logger.error({ err: String(error) }, `${what} failed: ${String(error)}`));
    };
    this.timers.push(
      setInterval(
        safely('the check of the queue', () => this.checkQueue()),
        this.options.sentinelEveryMs,
      ),
      setInterval(
        safely('the sweep', () => this.sweep()),
        this.options.sweepEveryMs,
      ),
    );
  }

  stop(): Promise<unknown> {
    for (const timer of this.timers) clearInterval(timer);
    return this.sweeping ?? Promise.resolve();
  }

  /** Undoes what stops or throttles the queues; when the queue's Redis forgot everything: says so once, and sweeps. */
  async checkQueue(): Promise<void> {
    const { coordination, logger } = this.options;
    await this.undoControls();
    if (await coordination.signals.alive()) return;
    if (!this.lost) {
      this.lost = true;
      logger.warn(await this.whatForgot());
    }
    await this.sweep();
  }

  /** Undoes a pause, a rate limit or a concurrency set on the queues from outside; its failure is said, not thrown. */
  async undoControls(): Promise<void> {
    const { controls, logger } = this.options;
    await controls
      ?.restore()
      .catch((error: unknown) =>
        logger.error({ err: String(error) }, `undoing a pause or limit of the queue failed: ${String(error)}`),
      );
  }

  /** The line that says the queue forgot: every job, or on a sharded queue the shards that did. */
  private async whatForgot(): Promise<string> {
    const shards = await this.options.coordination.signals.forgottenShards?.().catch(() => undefined);
    if (shards && shards.lost.length > 0 && shards.lost.length < shards.of) {
      const named = shards.lost.join(', ');
      return `queue shard${shards.lost.length > 1 ? 's' : ''} ${named} of ${shards.of} forgot every job (its master restarted empty, was flushed, or a failover's replica lacked them); re-creating their consumers' next steps from the records`;
    }
    return "the queue's Redis has forgotten every job (restarted empty, or flushed); re-creating every consumer's next step from the records";
  }

  /**
   * Reads every record and re-creates the jobs the queue lost; `visit` also sees each readable record.
   * Returns how many records were read. One sweep at a time: a call during one joins it.
   */
  sweep(visit?: (record: ConsumerRecord) => void): Promise<number> {
    this.sweeping ??= this.run(visit).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async run(visit?: (record: ConsumerRecord) => void): Promise<number> {
    const { store, queue, waits: scheduler, coordination, logger, now } = this.options;
    const started = now();
    let waits: ScheduledWait[] = [];
    let briefs: Array<[string, ConsumerBrief]> = [];
    let read = 0;
    let redone = 0;
    const undeclared: ConsumerRecord[] = [];
    for await (const record of store.scan()) {
      read++;
      const at = now();
      briefs.push([record._id, isUnreadable(record) ? unreadableBrief(record, at) : briefOf(record)]);
      if (briefs.length >= BATCH) {
        await coordination.notes.noteBriefs(briefs);
        briefs = [];
      }
      if (isUnreadable(record)) {
        this.sayUnreadable(record);
        continue;
      }
      if (this.saidUnreadable.size > 0) this.saidUnreadable.delete(record._id);
      visit?.(record);
      if (this.undeclared?.isUndeclared(record)) undeclared.push(record);
      if (EFFECT_STATES.has(record.machine.state)) {
        if (record.effectUntil === null || record.effectUntil <= at) {
          await queue.redo(record._id, record.rev);
          redone++;
        }
        continue;
      }
      const wait = this.waitOf(record, at);
      if (wait) waits.push(wait);
      if (waits.length >= BATCH) {
        await scheduler.scheduleWaits(waits);
        waits = [];
      }
    }
    await scheduler.scheduleWaits(waits);
    await coordination.notes.noteBriefs(briefs);
    await coordination.signals.markAlive(now());
    await coordination.layout.markSettled();
    if (this.lost) logger.info(`every consumer's next step re-created from ${read} records`);
    this.lost = false;
    if (undeclared.length > 0) await this.undeclared?.removeUndeclared(undeclared);
    logger.debug(
      { records: read, redone, undeclared: undeclared.length, ms: now().getTime() - started.getTime() },
      'sweep done',
    );
    return read;
  }

  /** Says once that a record cannot be read: it is not acted on, and the status shows it. */
  private sayUnreadable(record: UnreadableRecord): void {
    if (this.saidUnreadable.has(record._id)) return;
    this.saidUnreadable.add(record._id);
    this.options.logger.error(
      { consumer: record._id },
      `the record of ${record._id} cannot be read (${record.unreadable}); it is left as it is and not acted on, and the status reports it until it can be read`,
    );
  }

  /** The record's wait as a job; overdue waits are spread over one `verifyEvery`. */
  private waitOf(record: ConsumerRecord, now: Date): ScheduledWait | undefined {
    const { timer, desired } = record;
    if (!timer) return undefined;
    const verifyEveryMs = this.options.timing.get(record.provider)?.verifyEveryMs ?? 60_000;
    const dueAt =
      timer.dueAt > now ? timer.dueAt : new Date(now.getTime() + Math.floor(unitHash(record._id) * verifyEveryMs));
    return {
      key: record._id,
      timer: { ...timer, dueAt },
      ticket: checkTicket(record.machine, desired, record.appliedAt),
    };
  }
}
