/**
 * The jobs that drive consumers. A job carries one event for one consumer and never a
 * secret. Job ids are deterministic where a duplicate must collapse: a timer is
 * `<key>@<epoch>`, so the resync can re-create a lost one without doubling it.
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { CommandEvent } from '../../machines/consumer-events.js';
import type { RedisConnectionConfig } from '../config/config.js';
import type { TimerRecord } from '../store/consumer-record.js';

export type ConsumerJobData =
  /** A command from the sync, the CLI or the API. */
  | { key: string; kind: 'event'; event: CommandEvent }
  /** A wait the machine asked for has ended; stale unless `epoch` is the record's timer epoch. */
  | { key: string; kind: 'timer'; epoch: number; event: string }
  /** The desired spec in the record changed: deliver it to the machine. */
  | { key: string; kind: 'sync' };

const JOB_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { count: 1000 },
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
};

/** ioredis options for BullMQ from the resolved config (workers need `maxRetriesPerRequest: null`). */
export function bullConnection(c: RedisConnectionConfig) {
  return {
    host: c.host,
    port: c.port,
    db: c.db,
    username: c.username,
    password: c.password,
    ...(c.tls ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

export class ConsumerQueue {
  readonly queue: Queue<ConsumerJobData>;

  constructor(options: { connection: RedisConnectionConfig; prefix: string; name: string }) {
    this.queue = new Queue<ConsumerJobData>(options.name, {
      connection: bullConnection(options.connection),
      prefix: options.prefix,
      defaultJobOptions: JOB_OPTIONS,
    });
  }

  /** Schedules a timer's job; a job with the same id already there is left alone. */
  async timer(key: string, timer: TimerRecord, now: Date): Promise<void> {
    await this.queue.add(
      'timer',
      { key, kind: 'timer', epoch: timer.epoch, event: timer.event },
      { jobId: `${key}@${timer.epoch}`, delay: Math.max(0, timer.dueAt.getTime() - now.getTime()) },
    );
  }

  /** Asks a worker to deliver the record's desired spec; `tag` tells one desired spec from another. */
  async sync(key: string, tag: string): Promise<void> {
    await this.queue.add('sync', { key, kind: 'sync' }, { jobId: `${key}@sync-${tag}` });
  }

  /** Sends a command event now. */
  async send(key: string, event: CommandEvent, jobId?: string): Promise<void> {
    await this.queue.add(event.type.toLowerCase(), { key, kind: 'event', event }, jobId ? { jobId } : {});
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
