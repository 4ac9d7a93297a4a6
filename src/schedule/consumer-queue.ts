/**
 * The jobs that drive consumers. A job carries one event for one consumer and never a
 * secret. Job ids are deterministic where a duplicate must collapse: a wait is
 * `<key>@<rev>`, so a sweep can re-create a lost one without doubling it. What a worker would
 * otherwise take on a job's word (a desired spec, a routine check's ticket) is sealed (see
 * `src/queue/job-seal.ts`); a command job carries only an event a person may send, a redo job a revision.
 *
 * With `queue.shards: N` the queue is N BullMQ queues of the same name, one under each shard's
 * prefix (`config/shard-prefixes.ts`), and every job goes to its consumer's shard
 * (`src/queue/shard-of.ts`): a consumer's jobs are all in one shard, and each shard's keys in one slot.
 */
import { Queue, type JobsOptions } from 'bullmq';
import { shardPrefixes } from '../config/shard-prefixes.js';
import type { CommandEvent } from '../../machines/consumer-events.js';
import type { PersistedConsumer, WaitName } from '../../machines/machine-step.js';
import type { QueueConnectionConfig } from '../config/config.js';
import { bullConnection, type BullConnection } from '../queue/bull-connection.js';
import type { DesiredSpec, MachineRecord, WaitRecord } from '../store/consumer-record.js';
import { encodeMachine } from '../store/record-codec.js';
import type { JobSeal } from '../queue/job-seal.js';
import { RoundQueues } from './round-jobs.js';
import { byShard, shardOf } from '../queue/shard-of.js';
import { waitJobId } from './wait-job-id.js';

/**
 * What a wait's job carries so that a routine check needs no store read: the consumer at the
 * revision that scheduled it and the spec it checks. No secret: the grant secret is read from
 * its file.
 */
export interface CheckTicket {
  machine: MachineRecord;
  spec: Pick<DesiredSpec, 'login' | 'values' | 'secretPath' | 'specHash'>;
  /** When the spec was last applied (ms since the epoch): the first check after it is deep. */
  appliedAt: number | null;
}

/** The ticket of a wait scheduled from a record: its machine as written, the spec it checks, when that was applied. */
export function checkTicket(
  machine: PersistedConsumer,
  desired: CheckTicket['spec'],
  appliedAt: Date | null,
): CheckTicket {
  const { login, values, secretPath, specHash } = desired;
  return {
    machine: encodeMachine(machine),
    spec: { login, values, secretPath, specHash },
    appliedAt: appliedAt?.getTime() ?? null,
  };
}

export type ConsumerJobData =
  /** A wait the machine asked for has ended; stale unless `rev` is the record's revision. `seal`: the ticket's. */
  | { key: string; kind: 'wait'; rev: number; wait: WaitName; ticket: CheckTicket; seal: string }
  /**
   * What the contributions declare for the consumer (null: no longer declared), as the sync read it at `at` (ms);
   * `seal`: its.
   */
  | { key: string; kind: 'desired'; at: number; desired: DesiredSpec | null; seal: string }
  /** A command from the CLI or the API. */
  | { key: string; kind: 'command'; event: JobCommand }
  /** The record was found mid-effect at revision `rev`, past its deadline: its worker died. */
  | { key: string; kind: 'redo'; rev: number };

/**
 * The events a command job may carry: what `holdfast check`, `reapply`, `suspend` and `resume` (and a provider's
 * recovery) send.
 */
export const JOB_COMMANDS = ['CHECK_NOW', 'REAPPLY', 'SUSPEND', 'RESUME'] as const;
export type JobCommand = Extract<CommandEvent, { type: (typeof JOB_COMMANDS)[number] }>;

/** A wait to schedule: the record's wait (`timer`) and the ticket its job carries. */
export interface ScheduledWait {
  key: string;
  timer: WaitRecord;
  ticket: CheckTicket;
}

const JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { count: 1000 },
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
};

function commandName(event: CommandEvent): string {
  return event.type.toLowerCase().replace(/_/g, '-');
}

export { waitJobId } from './wait-job-id.js';

/** A job as `Queue.addBulk` takes it. */
type BulkJob = Parameters<Queue<ConsumerJobData>['addBulk']>[0][number];

/**
 * Jobs are named `<consumer> <kind> <event>`, e.g. `cache/photos wait verify`, `cache/photos command check-now`:
 * readable in Bull Board.
 */
export class ConsumerQueue {
  /**
   * One BullMQ queue per shard, shard `i` at index `i` (one, under the prefix as configured, unless `queue.shards` says
   * more).
   */
  readonly queues: ReadonlyArray<Queue<ConsumerJobData>>;
  /** The rounds' queues beside them, one per shard (`round-jobs.ts`). */
  readonly rounds: RoundQueues;

  private readonly seal: JobSeal;
  private readonly connection: BullConnection;

  /**
   * `seal` seals what the jobs this queue adds carry (made from the fingerprint key); `shards` (default 1): see
   * `queue.shards`.
   */
  constructor(options: {
    connection: QueueConnectionConfig;
    prefix: string;
    name: string;
    seal: JobSeal;
    shards?: number;
  }) {
    this.seal = options.seal;
    this.connection = bullConnection(options.connection);
    this.queues = shardPrefixes(options.prefix, options.shards ?? 1).map(
      (prefix) =>
        new Queue<ConsumerJobData>(options.name, {
          connection: this.connection.connection,
          prefix,
          defaultJobOptions: JOB_OPTIONS,
        }),
    );
    this.rounds = new RoundQueues(this.connection, options);
  }

  /** The first shard's queue: the only one unless `queue.shards` says more. */
  get queue(): Queue<ConsumerJobData> {
    return this.queues[0]!;
  }

  /** The queue of `key`'s shard. */
  queueOf(key: string): Queue<ConsumerJobData> {
    return this.queues[shardOf(key, this.queues.length)]!;
  }

  /** Adds `jobs`, each to its consumer's shard (one `addBulk` per shard). */
  private async addBulk(jobs: readonly BulkJob[]): Promise<void> {
    if (this.queues.length === 1) {
      await this.queue.addBulk([...jobs]);
      return;
    }
    await Promise.all(
      [...byShard(jobs, (job) => job.data.key, this.queues.length)].map(([shard, list]) =>
        this.queues[shard]!.addBulk(list),
      ),
    );
  }

  /**
   * Queues waits as wait jobs (kind `wait`) (a job with the same id already there, the same wait, is left
   * alone): what a round hands over when a wait's run failed, with the seal it was taken with
   * (`seal`; a ticket is sealed here only when none is given: one written by hand must not get a
   * seal it never had). Waits are scheduled in the due set (`due-waits.ts`), not here.
   */
  async queueWaits(waits: ReadonlyArray<ScheduledWait & { seal?: string }>, now = new Date()): Promise<void> {
    if (waits.length === 0) return;
    await this.addBulk(
      waits.map(({ key, timer, ticket, seal }) => ({
        name: `${key} wait ${timer.wait}`,
        data: {
          key,
          kind: 'wait' as const,
          rev: timer.rev,
          wait: timer.wait,
          ticket,
          seal: seal ?? this.seal.ticket(key, timer.rev, timer.wait, ticket),
        },
        opts: { jobId: waitJobId(key, timer.rev), delay: Math.max(0, timer.dueAt.getTime() - now.getTime()) },
      })),
    );
  }

  /** Delivers what the contributions declare for consumers (null: no longer declared), as read at `at`. */
  async deliverDesired(
    entries: ReadonlyArray<{ key: string; desired: DesiredSpec | null }>,
    at: number,
  ): Promise<void> {
    if (entries.length === 0) return;
    await this.addBulk(
      entries.map(({ key, desired }) => ({
        name: `${key} sync ${desired === null ? 'undeclared' : 'declared'}`,
        data: { key, kind: 'desired' as const, at, desired, seal: this.seal.desired(key, at, desired) },
        opts: { jobId: `${key}@desired-${at}` },
      })),
    );
  }

  /** Sends a command event now. */
  async send(key: string, event: JobCommand): Promise<void> {
    await this.queueOf(key).add(`${key} command ${commandName(event)}`, { key, kind: 'command', event });
  }

  /** Sends a command event to many consumers, each after its own delay (ms). */
  async sendLater(entries: ReadonlyArray<{ key: string; delayMs: number }>, event: JobCommand): Promise<void> {
    for (let i = 0; i < entries.length; i += 1000) {
      await this.addBulk(
        entries.slice(i, i + 1000).map(({ key, delayMs }) => ({
          name: `${key} command ${commandName(event)}`,
          data: { key, kind: 'command' as const, event },
          opts: { delay: Math.max(0, Math.round(delayMs)) },
        })),
      );
    }
  }

  /** Asks a worker to finish what a dead worker left mid-effect at revision `rev`. */
  async redo(key: string, rev: number): Promise<void> {
    await this.queueOf(key).add(`${key} redo`, { key, kind: 'redo', rev }, { jobId: `${key}@redo-${rev}` });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.map((q) => q.close()), this.rounds.close()]);
    this.connection.end();
  }
}
