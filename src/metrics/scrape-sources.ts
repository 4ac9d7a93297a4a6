/**
 * What `/metrics` reads when scraped, and where holdfast's engine finds it: the queue's Redis
 * (consumers by state, the unserved in brief, the queue's depth, when each provider was last
 * checked, orphans, contested consumers; the consumers counted there also set each provider's deep-check interval), the
 * record store (removals held back: one small document per provider)
 * and what this process already knows (its providers' timing, whether its store watch gets an
 * answer). Nothing here is read on a check's path; no record is read.
 */
import { STATE_MEANINGS } from '../../machines/consumer-health.js';
import type { BackendNodeReport } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import { deepCheckIntervalMs } from '../config/deep-check-interval.js';
import type { ContestReads, NoteReads, SignalReads, Suspects } from '../queue/coordination.js';
import type { ConsumerQueue } from '../schedule/consumer-queue.js';
import type { DueWaits } from '../schedule/due-waits.js';
import { briefState } from '../queue/consumer-brief.js';
import { providerOf } from '../store/consumer-key.js';
import type { ConsumerStore } from '../store/consumer-store.js';

/** Unserved consumers named per provider and state at most (the rest are counted in `holdfast_consumers`). */
export const UNSERVED_LISTED_PER_STATE = 20;

/** An unserved consumer, named. */
export interface UnservedConsumer {
  provider: string;
  consumer: string;
  login: string;
  state: string;
  /** Since when it has not been served (ms since the epoch). */
  since: number;
  brakeCount: number;
}

/** What the queue's Redis tells, read once per scrape. */
export interface QueueFacts {
  consumers: ReadonlyArray<{ provider: string; state: string; count: number }>;
  /** Up to {@link UNSERVED_LISTED_PER_STATE} per provider and state, the first by key. */
  unserved: readonly UnservedConsumer[];
  /** Jobs by BullMQ state. */
  queueDepth: Record<string, number>;
  /** The due set's waits: all of them, and those fallen due and not taken yet. */
  dueWaits: { scheduled: number; due: number };
  /** When any consumer of each provider was last checked (ms), by provider. */
  lastCheckAt: ReadonlyMap<string, number>;
  /** Logins no consumer claims, as last listed, by provider. */
  orphans: ReadonlyMap<string, number>;
  /** Consumers contested now (`src/queue/contest.ts`), by provider. */
  contested: ReadonlyMap<string, number>;
  /** Consumers a node event made suspect, not asked since, and that event, by provider. */
  suspects: ReadonlyMap<string, Suspects>;
}

/** What the record store tells, read once per scrape. */
export interface StoreFacts {
  /** Consumers a held-back change of the contributions would remove, by provider (0: none held back). */
  heldRemovals: ReadonlyMap<string, number>;
}

/** Sources read when scraped. */
export interface ScrapeSources {
  providers: ReadonlyArray<{
    name: string;
    verifyEveryMs: number;
    checkTimeoutMs: number;
    /** Its deep-check interval in force (ms) for so many consumers; absent: not shown. */
    deepCheckEveryMs?: (consumers: number) => number;
    /** A backend of several nodes: each node now, as this process's adapter knows it (no I/O); absent: one node. */
    nodes?: () => readonly BackendNodeReport[];
  }>;
  queue(): Promise<QueueFacts>;
  store(): Promise<StoreFacts>;
  /** Whether this process's watch of the record store gets an answer (in process, no I/O). */
  storeUp(): boolean;
}

function served(state: string): boolean {
  return (STATE_MEANINGS as Record<string, { healthy: boolean } | undefined>)[state]?.healthy === true;
}

/** Keeps the `max` smallest strings offered, sorted (no sort of every key). */
function keepSmallest(list: string[], key: string, max: number): void {
  if (list.length >= max && key >= list[list.length - 1]!) return;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid]! < key) low = mid + 1;
    else high = mid;
  }
  list.splice(low, 0, key);
  if (list.length > max) list.pop();
}

/** The state label of consumers whose noted state holdfast did not write (`note-seal.ts`). */
export const UNVERIFIED = 'unverified';

/** Consumers whose noted state fails its seal, counted by provider. */
function unsealedCounts(keys: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const key of keys) out.set(key.slice(0, key.indexOf('/')), (out.get(key.slice(0, key.indexOf('/'))) ?? 0) + 1);
  return out;
}

/** Consumers counted by provider and state, and the unserved to name (the first by key, per provider and state). */
export function countStates(
  states: Record<string, string>,
  perState = UNSERVED_LISTED_PER_STATE,
): { counts: QueueFacts['consumers']; listed: string[] } {
  const counts = new Map<string, { provider: string; state: string; count: number }>();
  const named = new Map<string, string[]>();
  for (const [key, encoded] of Object.entries(states)) {
    const provider = key.slice(0, key.indexOf('/'));
    const state = briefState(encoded);
    const label = `${provider}\n${state}`;
    const entry = counts.get(label) ?? { provider, state, count: 0 };
    entry.count++;
    counts.set(label, entry);
    if (served(state)) continue;
    const list = named.get(label) ?? [];
    keepSmallest(list, key, perState);
    named.set(label, list);
  }
  return { counts: [...counts.values()], listed: [...named.values()].flat() };
}

/** The queue's job counts by state, summed over its shards. */
async function jobCounts(queues: ConsumerQueue['queues']): Promise<Record<string, number>> {
  const each = await Promise.all(
    queues.map((q) => q.getJobCounts('waiting', 'delayed', 'active', 'failed', 'prioritized')),
  );
  const sum: Record<string, number> = {};
  for (const counts of each) for (const [state, n] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + n;
  return sum;
}

export interface EngineScrapeDeps {
  coordination: {
    readonly notes: Pick<NoteReads, 'allStates' | 'briefsOf' | 'lastCheckedAt' | 'orphans'>;
    readonly contests: Pick<ContestReads, 'contested'>;
    readonly signals: Pick<SignalReads, 'suspects'>;
  };
  queue: Pick<ConsumerQueue, 'queues'>;
  due: Pick<DueWaits, 'counts'>;
  store: Pick<ConsumerStore, 'providerStatuses'>;
  providers: readonly Pick<ProviderConfig, 'name' | 'timing' | 'adapter'>[];
  storeUp(): boolean;
  /** The nodes of a provider's backend, where its adapter reports them. */
  nodesOf?: (provider: string) => (() => readonly BackendNodeReport[]) | undefined;
}

export function engineScrapeSources(deps: EngineScrapeDeps): ScrapeSources {
  const names = deps.providers.map((p) => p.name);
  return {
    providers: deps.providers.map((p) => ({
      name: p.name,
      verifyEveryMs: p.timing.verifyEveryMs,
      checkTimeoutMs: p.timing.checkTimeoutMs,
      deepCheckEveryMs: (consumers: number) =>
        deepCheckIntervalMs({ timing: p.timing, costUs: p.adapter.deepCheckCostUs, consumers }),
      ...(deps.nodesOf?.(p.name) ? { nodes: deps.nodesOf(p.name)! } : {}),
    })),
    storeUp: () => deps.storeUp(),
    async queue() {
      const now = Date.now();
      const [states, queueDepth, dueWaits, lastCheckAt, orphans, contests, suspects] = await Promise.all([
        deps.coordination.notes.allStates(),
        jobCounts(deps.queue.queues),
        deps.due.counts(now),
        deps.coordination.notes.lastCheckedAt(names),
        deps.coordination.notes.orphans(names),
        // counted, none listed: one ZCOUNT per provider (and shard)
        deps.coordination.contests.contested(names, now, 0),
        deps.coordination.signals.suspects(names),
      ]);
      const counted = countStates(states.states);
      const { listed } = counted;
      // a state holdfast did not write (its seal fails) is unknown: counted apart, never as held
      const counts = [
        ...counted.counts,
        ...[...unsealedCounts(states.unsealed)].map(([provider, count]) => ({ provider, state: UNVERIFIED, count })),
      ];
      const briefs = await deps.coordination.notes.briefsOf(listed);
      const unserved = listed.flatMap((consumer): UnservedConsumer[] => {
        const brief = briefs.get(consumer);
        if (!brief) return [];
        const provider = providerOf(consumer);
        return [
          {
            provider,
            consumer,
            login: brief.login,
            state: brief.state,
            since: brief.unservedSince ?? brief.since,
            brakeCount: brief.brakeCount,
          },
        ];
      });
      const orphanCounts = new Map(names.map((name) => [name, orphans.get(name)?.logins.length ?? 0]));
      const contested = new Map(names.map((name) => [name, contests.get(name)?.count ?? 0]));
      return {
        consumers: counts,
        unserved,
        queueDepth,
        dueWaits,
        lastCheckAt,
        orphans: orphanCounts,
        contested,
        suspects: new Map(names.map((name) => [name, suspects.get(name) ?? { count: 0, event: null }])),
      };
    },
    async store() {
      const statuses = await deps.store.providerStatuses();
      return {
        heldRemovals: new Map(
          names.map((name) => [name, statuses.find((s) => s._id === name)?.heldRemovals?.removals ?? 0]),
        ),
      };
    },
  };
}
