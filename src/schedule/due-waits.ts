/**
 * The due set: every consumer's wait, kept in the queue's Redis by when it falls due, for
 * rounds (`workers/due-rounds.ts`, each a BullMQ job: `round-jobs.ts`) to take many at a time
 * instead of one BullMQ job each. A routine check then costs no job of its own: BullMQ's take and
 * put-back were the largest part of its cost.
 *
 * Per shard, three keys of its slot (`src/queue/coordination/keys.ts`): the waits by due time, each
 * one's revision, and each one's data, as its wait job would carry it (the ticket and its seal:
 * no secret). One wait per consumer: a wait of a later revision replaces an earlier one, one of
 * the same revision is left alone (the same wait, as a job id is). A round takes a wait by pushing
 * it to the end of a lease, and settles it afterwards only while its revision is still the one it
 * took; a worker that dies leaves its waits to be taken again when their leases end.
 *
 * What the due set holds is taken on its seal's word only, as a job is (`workers/job-trust.ts`).
 */
import { WAIT_NAMES, type WaitName } from '../../machines/machine-step.js';
import { shardPrefixes } from '../config/shard-prefixes.js';
import type { QueueRedis } from '../queue/bull-connection.js';
import {
  createDueSet,
  holdfastPrefix,
  type DueSet,
  type SettledEntry,
  type TakenEntry,
} from '../queue/coordination.js';
import type { CheckTicket, ConsumerJobData, ScheduledWait } from './consumer-queue.js';
import type { JobSeal } from '../queue/job-seal.js';
import { byShard } from '../queue/shard-of.js';
import { KnownWaits } from './known-waits.js';

/** Where waits are scheduled: the due set (the records' writers and the sweep know no more of it). */
export interface WaitScheduler {
  /**
   * Schedules each wait at its revision; one of the same or a later revision already there is left
   * alone (but for its data). `seal`: the one it came with (a wait whose ticket was not judged
   * here keeps the seal it had, or none); else the ticket is sealed here.
   */
  scheduleWaits(waits: ReadonlyArray<ScheduledWait & { seal?: string }>): Promise<void>;
}

/**
 * A wait as a round took it: its key, its revision as stored, when it fell due (ms), and the wait job it stands for.
 */
export interface TakenWait {
  key: string;
  rev: string;
  dueAt: number;
  job: Extract<ConsumerJobData, { kind: 'wait' }>;
}

/** A taken wait settled: due again at `at` (ms), or done with (null). */
export type Settled = SettledEntry;

const WAITS: ReadonlySet<string> = new Set(WAIT_NAMES);

/**
 * The wait job a stored wait stands for. One holdfast did not write (damaged, or written by
 * hand) is a `verify` wait whose ticket carries no seal: the worker does not use it and goes by
 * the record, which puts the record's own wait back (a stored revision that is not a count is taken
 * for one later than any, so that the record's replaces it).
 */
export function takenWait({ key, rev, text, dueAt }: TakenEntry): TakenWait {
  const at = /^\d{1,15}$/.test(rev) ? Number(rev) : Number.MAX_SAFE_INTEGER;
  const { wait, ticket, seal } = parsed(text);
  const readable =
    typeof wait === 'string' &&
    WAITS.has(wait) &&
    typeof seal === 'string' &&
    typeof ticket === 'object' &&
    ticket !== null;
  if (!readable)
    return {
      key,
      rev,
      dueAt,
      job: { key, kind: 'wait', rev: at, wait: 'verify', ticket: {} as CheckTicket, seal: '' },
    };
  return {
    key,
    rev,
    dueAt,
    job: { key, kind: 'wait', rev: at, wait: wait as WaitName, ticket: ticket as CheckTicket, seal },
  };
}

function parsed(text: string): { wait?: unknown; ticket?: unknown; seal?: unknown } {
  try {
    const data: unknown = JSON.parse(text);
    return typeof data === 'object' && data !== null ? data : {};
  } catch {
    return {};
  }
}

/** The due set of every shard of the queue. */
export class DueWaits implements WaitScheduler {
  private readonly parts: DueSet[];
  /** Waits read already: one taken again with the same text is not parsed (nor its seal checked) again. */
  private readonly known = new KnownWaits();

  constructor(
    redis: QueueRedis,
    queue: { prefix: string; shards: number },
    private readonly seal: JobSeal,
  ) {
    this.parts = shardPrefixes(queue.prefix, queue.shards).map((prefix) => createDueSet(redis, holdfastPrefix(prefix)));
  }

  get shards(): number {
    return this.parts.length;
  }

  async scheduleWaits(waits: ReadonlyArray<ScheduledWait & { seal?: string }>): Promise<void> {
    if (waits.length === 0) return;
    const entries = waits.map(({ key, timer, ticket, seal }) => ({
      key,
      rev: timer.rev,
      dueAt: timer.dueAt.getTime(),
      text: JSON.stringify({
        wait: timer.wait,
        ticket,
        seal: seal ?? this.seal.ticket(key, timer.rev, timer.wait, ticket),
      }),
    }));
    await Promise.all(
      [...byShard(entries, (e) => e.key, this.parts.length)].map(([shard, list]) => this.parts[shard]!.schedule(list)),
    );
  }

  /**
   * Takes up to `limit` of shard `shard`'s waits due by `now`, each leased until `leaseUntil`; and when its next wait
   * falls due.
   */
  async take(
    shard: number,
    now: number,
    leaseUntil: number,
    limit: number,
  ): Promise<{ taken: TakenWait[]; nextAt: number | null }> {
    const { taken, nextAt } = await this.parts[shard]!.take(now, leaseUntil, limit);
    return { taken: taken.map((entry) => this.read(entry)), nextAt };
  }

  settle(shard: number, settled: readonly Settled[]): Promise<void> {
    for (const { key, at } of settled) if (at === null) this.known.forget(key);
    return settled.length === 0 ? Promise.resolve() : this.parts[shard]!.settle(settled);
  }

  /** A taken entry as its wait job: the one read from the same text before, else read now (and known, if sealed). */
  private read(entry: TakenEntry): TakenWait {
    const { key, rev, dueAt } = entry;
    const known = this.known.get(entry);
    if (known) return { key, rev, dueAt, job: known };
    const wait = takenWait(entry);
    return wait.job.seal === '' ? wait : { ...wait, job: this.known.set(entry, wait.job) };
  }

  /**
   * How many waits every shard holds, and how many of them are due by `now` (taken ones count as due at their lease's
   * end).
   */
  async counts(now: number): Promise<{ scheduled: number; due: number }> {
    const each = await Promise.all(this.parts.map((part) => part.counts(now)));
    return { scheduled: each.reduce((n, c) => n + c.scheduled, 0), due: each.reduce((n, c) => n + c.due, 0) };
  }
}
