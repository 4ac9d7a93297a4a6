/**
 * The status of a sharded queue stands on the shards that answered. Each shard's reads are
 * guarded for one report: a read that fails, or does not answer within its wait
 * ({@link ShardWaits}), marks its shard unreadable, with why and the node that owns its slot
 * (as the cluster client maps it, so the master that died until a replica is promoted); that read, and
 * every later read of the shard for this report, gives "nothing from this shard" instead of
 * throwing. The report then names each unreadable shard once and takes no absence of its
 * consumers for the truth (none is counted as without a record, and its sentinel is not taken
 * as gone). A failed read is never taken as empty without its shard being named.
 *
 * One shard (the plain coordination) is read as before: a failed read fails the report.
 */
import { formatDuration } from '../config/duration.js';
import type { Coordination, StatusReads } from '../queue/coordination.js';
import { ShardedCoordination, type ShardWhere } from '../queue/sharded-coordination.js';
import { within, type ReadOutcome } from './read-within.js';
import { inWords } from './status-words.js';

/** A shard the status could not read: its prefix, the node that owns its slot (when known), and why in words. */
export interface UnreadableShard {
  shard: string;
  node: string | null;
  error: string;
  /** Whether its consumers' states answered before it stopped (so they are counted, without their details). */
  counted: boolean;
}

/** What each of a part's reads gives for a shard that cannot be read. */
type Nothing<Part> = {
  readonly [K in keyof Part]: Part[K] extends (...args: never[]) => Promise<infer R> ? () => R : never;
};

/** What each status read gives for a shard that cannot be read: nothing from it. */
const NOTHING: { readonly [P in keyof StatusReads]: Nothing<StatusReads[P]> } = {
  notes: {
    allStates: () => ({ states: {}, unsealed: [] }),
    briefsOf: () => new Map(),
    lastCheckedAt: () => new Map(),
    askedCounts: () => new Map(),
    checkedBefore: () => [],
    orphans: () => new Map(),
    nodes: () => new Map(),
    failedLogins: () => new Map(),
    timeline: () => [],
  },
  signals: {
    pauses: () => new Map(),
    couldNotAskCounts: () => new Map(),
    suspects: () => new Map(),
    // unknown is not gone: the shard's line says it could not be read
    alive: () => true,
  },
  locks: { checkMemos: () => new Map() },
  contests: { contested: () => new Map(), contestOf: () => null },
};

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * How long one report waits for a shard: each read at most `perReadMs`, and none past `until`
 * (epoch ms). A read is cut on its own, not by a deadline shared from the start, so that one
 * shard that keeps the first reads waiting does not leave the later reads of the others no time.
 */
export interface ShardWaits {
  perReadMs: number;
  until: number;
}

/** The unreadable shards of one report, and the guard of each shard's reads. */
export class ShardOutages {
  private readonly unreadable = new Map<number, Omit<UnreadableShard, 'counted'>>();
  /** The shards whose consumers' states answered. */
  private readonly counted = new Set<number>();

  /** `waits`: how long a shard's read is waited for (null: as long as it takes, only failures count). */
  constructor(private readonly waits: ShardWaits | null) {}

  /** The shards found unreadable so far, in shard order. */
  list(): UnreadableShard[] {
    return [...this.unreadable]
      .sort(([a], [b]) => a - b)
      .map(([index, shard]) => ({ ...shard, counted: this.counted.has(index) }));
  }

  /** `read`'s answer, or `fallback`'s when it fails or is late (settles by the deadline either way). */
  async settle<T>(read: Promise<T>, fallback: () => T): Promise<T> {
    const outcome = await this.within(read);
    return outcome.kind === 'answered' ? outcome.value : fallback();
  }

  /** `shard` with its status reads guarded: the others pass through. */
  guard(shard: Coordination, where: ShardWhere, index: number): Coordination {
    const { locks, signals, notes, contests } = shard;
    const guarded = <T extends object>(part: T, nothing: Readonly<Record<string, () => unknown>>) =>
      this.guarded(part, nothing, where, index);
    return {
      locks: guarded(locks, NOTHING.locks),
      signals: guarded(signals, NOTHING.signals),
      notes: guarded(notes, NOTHING.notes),
      contests: guarded(contests, NOTHING.contests),
    };
  }

  /** `part` with the reads `nothing` names guarded. */
  private guarded<T extends object>(
    part: T,
    nothing: Readonly<Record<string, () => unknown>>,
    where: ShardWhere,
    index: number,
  ): T {
    return new Proxy(part, {
      get: (target, name) => {
        const value: unknown = Reflect.get(target, name, target);
        if (typeof name !== 'string' || !Object.hasOwn(nothing, name) || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const answer = await this.read(
            index,
            where,
            () => Reflect.apply(value, target, args) as Promise<unknown>,
            nothing[name]!,
          );
          if (name === 'allStates' && answer.answered) this.counted.add(index);
          return answer.value;
        };
      },
    });
  }

  private async read<T>(
    index: number,
    where: ShardWhere,
    read: () => Promise<T>,
    nothing: () => T,
  ): Promise<{ value: T; answered: boolean }> {
    if (this.unreadable.has(index)) return { value: nothing(), answered: false };
    const started = Date.now();
    const outcome = await this.within(Promise.resolve().then(read));
    if (outcome.kind === 'answered') return { value: outcome.value, answered: true };
    if (!this.unreadable.has(index)) {
      const waited = formatDuration(Math.max(1000, Math.round((Date.now() - started) / 1000) * 1000));
      const nodeError = where.nodeError();
      const error =
        outcome.kind === 'failed'
          ? inWords(message(outcome.error))
          : `did not answer within ${waited}${nodeError ? ` (its node: ${inWords(nodeError)})` : ''}`;
      this.unreadable.set(index, { shard: where.shard, node: where.node(), error });
    }
    return { value: nothing(), answered: false };
  }

  private within<T>(promise: Promise<T>): Promise<ReadOutcome<T>> {
    return within(promise, this.waits === null ? null : Math.min(this.waits.perReadMs, this.waits.until - Date.now()));
  }
}

/**
 * The reads one report makes, and its outages: a sharded coordination's shards guarded (see the
 * file's comment); any other read as it is, with no outages.
 */
export function readsForReport(
  coordination: StatusReads,
  waits: ShardWaits | null,
): { reads: StatusReads; outages: ShardOutages | null } {
  if (!(coordination instanceof ShardedCoordination)) return { reads: coordination, outages: null };
  const outages = new ShardOutages(waits);
  return { reads: coordination.withParts((shard, where, index) => outages.guard(shard, where, index)), outages };
}

/** The status's line for an unreadable shard: which, on which node, why, and what it means for its consumers. */
export function unreadableShardLine(shard: UnreadableShard): string {
  const node = shard.node ? ` on node ${shard.node}` : '';
  const consumers = shard.counted
    ? 'its consumers are counted from the states it gave before, without their details'
    : 'its consumers are left out of this status until it answers';
  return `queue shard ${shard.shard}${node} cannot be read: ${shard.error}; ${consumers} (on a Redis Cluster, a failover promotes a replica within cluster-node-timeout)`;
}
