/**
 * What stops or throttles holdfast's BullMQ queues from outside its code: a queue paused, a global
 * rate limit, a global concurrency. BullMQ keeps each in the queue's meta hash (`<prefix>:<name>:meta`,
 * fields `paused`, `max` with `duration`, `concurrency`), where Bull Board's pause, rate-limit and
 * concurrency actions, `Queue.pause()`, `setGlobalRateLimit()` or an `HSET` by any writer of the
 * queue's Redis put them, and where they outlive every holdfast restart. holdfast never sets any of
 * them, so one found there stops every check and heal silently: a login dropped by hand stays gone.
 *
 * The decision: holdfast undoes it at once and says so loudly (a warning naming the queue and what
 * was set, `holdfast_queue_controls_undone_total{queue,control}`), at start-up and at every check of
 * the queue (`sync.sentinelEvery`); while one is in place the status is red naming it
 * ({@link QueueControlsRead}, read from the meta hash itself, so nothing a writer can note beside it
 * turns it green). The queues are holdfast's own: an operator who trusts a green status expects the
 * heals to run, and one who wants holdfast stopped stops its processes.
 *
 * The status reads it without loading BullMQ; the undoing is BullMQ's own (`resume`, which also
 * wakes the workers, `removeGlobalRateLimit` with the active limit's key, `removeGlobalConcurrency`).
 */
import type { Redis } from 'ioredis';
import { shardPrefixes } from '../config/shard-prefixes.js';
import { formatDuration } from '../config/duration.js';
import type { Logger } from '../logging/logger.js';

/**
 * How long a worker that met a rate limit waits before asking again (BullMQ's `maximumRateLimitDelay`, 30 s by
 * default): holdfast sets none, so one met was set from outside, and once undone the workers run again within this.
 */
export const RATE_LIMIT_RECHECK_MS = 1_000;

/** What can be set on a queue to stop or throttle it. */
export type QueueControlKind = 'paused' | 'rateLimit' | 'concurrency';

/** One found on a queue: which (`<prefix>:<name>`), what, and in words. */
export interface QueueControl {
  queue: string;
  control: QueueControlKind;
  what: string;
}

/** The meta hash's fields that hold them, in the order read. */
const FIELDS = ['paused', 'max', 'duration', 'concurrency'] as const;

/** A holdfast queue: its name as the lines say it, and its meta hash's key. */
export interface QueueMetaKey {
  queue: string;
  meta: string;
}

/**
 * The meta keys of holdfast's queues under `prefix` in `shards` shards: the consumers' queue `name`
 * and the rounds' queue beside it (`src/schedule/round-jobs.ts`'s `roundQueueName`), as BullMQ names them.
 */
export function holdfastQueueMetas(prefix: string, name: string, shards: number): QueueMetaKey[] {
  return shardPrefixes(prefix, shards).flatMap((shard) =>
    [name, `${name}-rounds`].map((queue) => ({ queue: `${shard}:${queue}`, meta: `${shard}:${queue}:meta` })),
  );
}

/** A field's value as the lines say it: a number as written; anything else (a writer's text) not repeated. */
const shown = (value: string | null | undefined): string =>
  value && /^\d{1,15}$/.test(value) ? value : 'a value that is not a number';

/** What the fields of a queue's meta hash set, in words (none: nothing stops or throttles it). */
export function controlsIn(queue: string, fields: ReadonlyArray<string | null>): QueueControl[] {
  const [paused, max, duration, concurrency] = fields;
  const found: QueueControl[] = [];
  if (paused !== null && paused !== undefined)
    found.push({ queue, control: 'paused', what: 'paused: no job of it runs, so no check or heal' });
  if (max !== null && max !== undefined) {
    const window = shown(duration) === duration ? formatDuration(Number(duration)) : shown(duration);
    found.push({ queue, control: 'rateLimit', what: `rate-limited to ${shown(max)} job(s) per ${window}` });
  }
  if (concurrency !== null && concurrency !== undefined)
    found.push({
      queue,
      control: 'concurrency',
      what: `limited to ${shown(concurrency)} job(s) at once across every worker`,
    });
  return found;
}

/** Reads what is set on holdfast's queues. */
export interface QueueControlsRead {
  /** Every control set on a queue now; a queue whose meta cannot be read is left out (its read fails elsewhere). */
  controls(): Promise<QueueControl[]>;
}

/** The controls of the queues `metas` names, read from `redis` (one `HMGET` each: on a cluster each is one slot's). */
export function queueControlsRead(redis: Pick<Redis, 'hmget'>, metas: readonly QueueMetaKey[]): QueueControlsRead {
  return {
    async controls() {
      const read = await Promise.all(
        metas.map(({ queue, meta }) =>
          redis.hmget(meta, ...FIELDS).then(
            (fields) => controlsIn(queue, fields),
            () => [],
          ),
        ),
      );
      return read.flat();
    },
  };
}

/** A status line for a control in place. */
export function controlLine(c: QueueControl): string {
  return `queue ${c.queue} is ${c.what}, set outside holdfast (Bull Board or a writer of the queue's Redis): a running \`holdfast run\` undoes it within sync.sentinelEvery`;
}

/** What undoing needs of one BullMQ queue (`Queue`'s methods). */
export interface UndoableQueue {
  resume(): Promise<unknown>;
  removeGlobalRateLimit(): Promise<unknown>;
  removeRateLimitKey(): Promise<unknown>;
  removeGlobalConcurrency(): Promise<unknown>;
}

export interface QueueControlsOptions {
  read: QueueControlsRead;
  /** Each queue by the name its controls carry (`<prefix>:<name>`). */
  queues: ReadonlyMap<string, UndoableQueue>;
  logger: Logger;
  /** Counts one undone (`holdfast_queue_controls_undone_total`). */
  undone?: (queue: string, control: QueueControlKind) => void;
}

const UNDO: Record<QueueControlKind, (q: UndoableQueue) => Promise<unknown>> = {
  paused: (q) => q.resume(),
  // the active limit's key too: a limit already reached would otherwise hold the workers until it expires
  rateLimit: async (q) => {
    await q.removeGlobalRateLimit();
    await q.removeRateLimitKey();
  },
  concurrency: (q) => q.removeGlobalConcurrency(),
};

/** How often the undoing of one control on one queue is said: its repeats meanwhile are counted in the next line. */
const SAY_EVERY_MS = 60_000;

/** Finds what stops or throttles holdfast's queues and undoes it, saying so (repeats counted, said once a minute). */
export class QueueControls {
  /** By queue and control: when last said, and how many undone since that were not said. */
  private readonly said = new Map<string, { at: number; unsaid: number }>();

  constructor(
    private readonly options: QueueControlsOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undoes every control found; returns those undone. */
  async restore(): Promise<QueueControl[]> {
    const { read, queues, undone } = this.options;
    const found = (await read.controls()).filter((c) => queues.has(c.queue));
    for (const c of found) {
      await UNDO[c.control](queues.get(c.queue)!);
      undone?.(c.queue, c.control);
      this.say(c);
    }
    return found;
  }

  private say(c: QueueControl): void {
    const key = `${c.queue} ${c.control}`;
    const at = this.now();
    const last = this.said.get(key);
    if (last && at - last.at < SAY_EVERY_MS) {
      last.unsaid++;
      return;
    }
    const again = last && last.unsaid > 0 ? ` (undone ${last.unsaid} more time(s) since the last line)` : '';
    this.said.set(key, { at, unsaid: 0 });
    this.options.logger.warn(
      { queue: c.queue, control: c.control },
      `queue ${c.queue} was ${c.what}, set outside holdfast (Bull Board, or a writer of the queue's Redis)${again}; ` +
        'holdfast never sets it, and undid it: checks and heals run again. To stop holdfast, stop its processes',
    );
  }
}
