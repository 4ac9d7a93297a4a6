/**
 * The coordination of a sharded queue (`queue.shards: N`): one {@link Coordination} per shard,
 * each under its shard's prefix (`config/shard-prefixes.ts`), presented as one whose every part
 * (`sharded-coordination/`) wraps that part of each shard. Where each entry lives, and why:
 *
 * - **in its consumer's shard** (routed by `shard-of.ts`): the lock, the revision, the check
 *   memo, the state and the brief, and the per-provider sets a script touches beside them:
 *   the asked-at sorted set (`release` and `noteBriefs` write it with the memo or the brief)
 *   and the could-not-ask set (`release`). A script's keys are all in one slot, so these sets
 *   exist once per shard and per provider, each holding that shard's consumers. Each
 *   consumer's timeline events go to its shard's stream too (they are written with its brief,
 *   and a heal of 100k consumers then spreads its writes over every master);
 * - **in every shard**: the sentinel. A master that restarts empty forgets its shards alone;
 *   the queue is alive only while every shard's sentinel is;
 * - **in the home shard (shard 0)**: what no script touches beside a consumer's keys: each
 *   provider's pause and probe, orphans and confirmed removals, and the record store's outage.
 *
 * Reads of every consumer or of a provider as a whole are fanned out over the shards and merged:
 * states, memos, briefs, asked-at times, could-not-ask sets and counts, timelines. One shard that
 * fails a read fails it whole; the status reads through {@link ShardedCoordination.withParts}
 * instead, with each shard's reads guarded, so that what the other shards answered is reported
 * and the shard that did not is named, with where it is ({@link ShardWhere}).
 *
 * One shard (the default) is the plain coordination under the configured prefix: the same keys
 * as before shards existed.
 *
 * **Changing `queue.shards`** leaves entries in shards that are no longer their consumers' (or
 * whose consumers are gone), which the fanned-out reads would take for current. So the queue's
 * layout is recorded under the prefix as configured, `<shards> <generation>` (absent: one shard,
 * generation 0), and each shard notes the generation its entries were written under: at the
 * sync's start ({@link LayoutSettling.settleLayout}, before its first sweep) a changed number of
 * shards counts the generation up, and every shard of another generation has its consumers'
 * entries cleared; the sweep that follows notes every record again, and writes the layout again
 * with the sentinel ({@link LayoutSettling.markSettled}). Locks are never cleared.
 */
import { Cluster } from 'ioredis';
import type { QueueRedis } from './bull-connection.js';
import { shardPrefixes } from '../config/shard-prefixes.js';
import {
  createCoordination,
  holdfastPrefix,
  type Coordination,
  type LayoutMarks,
  type NoteSeal,
  type ShardLayout,
} from './coordination.js';
import { keySlot } from './key-slot.js';
import { ShardedContests } from './sharded-coordination/contests.js';
import { ShardedLocks } from './sharded-coordination/locks.js';
import { ShardedNotes } from './sharded-coordination/notes.js';
import { ShardedSignals } from './sharded-coordination/signals.js';
import { Shards } from './sharded-coordination/shards.js';

/** What a change of `queue.shards` did to the queue's Redis. */
export interface LayoutChange {
  from: ShardLayout;
  to: ShardLayout;
  /** Shards whose consumers' entries were cleared. */
  reset: number;
}

/** The layout kept true, by the process that runs the desired-state sync. */
export interface LayoutSettling {
  /**
   * Records the configured number of shards; clears each shard's consumers' entries when they
   * were written under another layout (`providers`: whose per-provider sets to clear). Null when
   * nothing changed.
   */
  settleLayout(providers: readonly string[]): Promise<LayoutChange | null>;
  /** The layout the queue's Redis was last set up for (absent: one shard, generation 0). */
  recordedLayout(): Promise<ShardLayout>;
  /**
   * Writes again the layout this process settled, once the sentinel is marked (a queue flushed
   * forgets it too); nothing before one is settled, nor for the first (generation 0).
   */
  markSettled(): Promise<void>;
}

/** The queue's coordination, with its layout kept true by the process that runs the sync. */
export interface QueueCoordination extends Coordination {
  readonly layout: LayoutSettling;
}

/**
 * Where one shard is, as the status names it: its prefix, and the node that owns its slot now (`host:port`), when
 * known.
 */
export interface ShardWhere {
  shard: string;
  node(): string | null;
  /** What the connection to that node said went wrong lately (a refused connect), if anything. */
  nodeError(): string | null;
}

/** A node's error is said beside its shard this long after the connection reported it (ms). */
const NODE_ERROR_RECENT_MS = 30_000;
/** Each cluster connection's last error of each node (`host:port` → when, what); as many entries as nodes at most. */
const nodeErrors = new WeakMap<Cluster, Map<string, { at: number; message: string }>>();

function nodeErrorsOf(cluster: Cluster): Map<string, { at: number; message: string }> {
  let errors = nodeErrors.get(cluster);
  if (!errors) {
    const seen = new Map<string, { at: number; message: string }>();
    cluster.on('node error', (error: Error, node: string) =>
      seen.set(node, { at: Date.now(), message: error.message }),
    );
    nodeErrors.set(cluster, (errors = seen));
  }
  return errors;
}

/**
 * Where the shard of `prefix` is on `redis`: on a cluster, the master of its slot (its hash tag's) as the client last
 * mapped it.
 */
function whereOf(redis: QueueRedis, prefix: string): ShardWhere {
  const slot = keySlot(holdfastPrefix(prefix));
  if (!(redis instanceof Cluster))
    return {
      shard: prefix,
      node: () => `${redis.options.host ?? 'localhost'}:${redis.options.port ?? 6379}`,
      nodeError: () => null,
    };
  const errors = nodeErrorsOf(redis);
  const node = () => redis.slots[slot]?.[0] ?? null;
  const nodeError = () => {
    const seen = errors.get(node() ?? '');
    return seen && Date.now() - seen.at < NODE_ERROR_RECENT_MS ? seen.message : null;
  };
  return { shard: prefix, node, nodeError };
}

/** The coordination of the queue `queue` on `redis` (its notes sealed with `seal`): sharded when `queue.shards` is more than one. */
export function queueCoordination(
  redis: QueueRedis,
  queue: { prefix: string; shards: number },
  seal: NoteSeal,
): QueueCoordination {
  const base = createCoordination(redis, holdfastPrefix(queue.prefix), seal);
  const prefixes = shardPrefixes(queue.prefix, queue.shards);
  const parts =
    prefixes.length === 1 ? [base] : prefixes.map((prefix) => createCoordination(redis, holdfastPrefix(prefix), seal));
  const layout = new QueueLayout(
    base.layout,
    parts.map((part) => part.layout),
  );
  if (parts.length === 1) return { ...base, layout };
  return Object.assign(
    new ShardedCoordination(
      parts,
      prefixes.map((prefix) => whereOf(redis, prefix)),
    ),
    { layout },
  );
}

/** The queue's layout as the process that runs the sync settles it (see the file's comment). */
class QueueLayout implements LayoutSettling {
  /** The layout this process settled (the sync's). */
  private settled: ShardLayout | undefined;

  constructor(
    /** The marks under the prefix as configured. */
    private readonly base: LayoutMarks,
    private readonly shards: readonly LayoutMarks[],
  ) {}

  async settleLayout(providers: readonly string[]): Promise<LayoutChange | null> {
    const change = await settle(this.base, this.shards, providers);
    this.settled = change?.to ?? (await this.base.layout());
    return change;
  }

  recordedLayout(): Promise<ShardLayout> {
    return this.base.layout();
  }

  async markSettled(): Promise<void> {
    const settled = this.settled;
    if (settled && settled.generation > 0)
      await Promise.all([
        this.base.recordLayout(settled),
        ...this.shards.map((s) => s.markShardGeneration(settled.generation)),
      ]);
  }
}

async function settle(
  base: LayoutMarks,
  shards: readonly LayoutMarks[],
  providers: readonly string[],
): Promise<LayoutChange | null> {
  const from = await base.layout();
  const to = from.shards === shards.length ? from : { shards: shards.length, generation: from.generation + 1 };
  let reset = 0;
  for (const shard of shards) {
    if ((await shard.shardGeneration()) === to.generation) continue;
    await shard.resetShard(to.generation, providers);
    reset++;
  }
  // recorded last: a start interrupted before this clears again
  if (to !== from) await base.recordLayout(to);
  return to === from && reset === 0 ? null : { from, to, reset };
}

/**
 * Every shard's coordination as one: each part sends an entry to its consumer's shard, to the home shard, or to every
 * shard.
 */
export class ShardedCoordination implements Coordination {
  readonly locks: ShardedLocks;
  readonly signals: ShardedSignals;
  readonly notes: ShardedNotes;
  readonly contests: ShardedContests;

  constructor(
    private readonly shards: readonly Coordination[],
    /** Where each shard is, in the same order (unnamed when not given). */
    private readonly where: readonly ShardWhere[] = shards.map((_, i) => ({
      shard: `shard ${i}`,
      node: () => null,
      nodeError: () => null,
    })),
  ) {
    this.locks = new ShardedLocks(new Shards(shards.map((s) => s.locks)));
    this.signals = new ShardedSignals(
      new Shards(shards.map((s) => s.signals)),
      where.map((w) => w.shard),
    );
    this.notes = new ShardedNotes(new Shards(shards.map((s) => s.notes)));
    this.contests = new ShardedContests(new Shards(shards.map((s) => s.contests)));
  }

  /** The same shards, each seen through `part` (the status guards each shard's reads), merged alike. */
  withParts(part: (shard: Coordination, where: ShardWhere, index: number) => Coordination): ShardedCoordination {
    return new ShardedCoordination(
      this.shards.map((shard, i) => part(shard, this.where[i]!, i)),
      this.where,
    );
  }
}
