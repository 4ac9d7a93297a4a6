/**
 * What workers share besides jobs, in the queue's Redis, and all of holdfast's own knowledge
 * of it (BullMQ keeps its own). Three parts, each in `coordination/`, and each shard's due set
 * (`due.ts`, sealed and read through `due-waits.ts`):
 *
 * - **locks and check memos** (`locks.ts`): each consumer's lock, its revision as last
 *   written and what its checks learned;
 * - **provider signals** (`signals.ts`): pauses and probes, could-not-ask sets, the record
 *   store's outage and the sentinel whose absence says the queue's Redis forgot everything;
 * - **status notes** (`notes.ts`): records in brief, when each consumer was last asked,
 *   orphans, confirmed removals and each provider's timeline; and the contested consumers
 *   counted with a heal's timeline note (`contests.ts`, `contest-script.ts`).
 *
 * They share only the key table (`keys.ts`), the script table (`scripts.ts`) and the checked
 * codecs of what they read (`values.ts`). Each client depends on the slices it uses.
 */
import type { QueueRedis } from './bull-connection.js';
import { DueSet } from './coordination/due.js';
import { coordinationKeys } from './coordination/keys.js';
import { Contests, type ContestReads } from './coordination/contests.js';
import { Layout, type LayoutMarks } from './coordination/layout.js';
import { Locks, type ConsumerLocks, type MemoReads, type RevisionNotes } from './coordination/locks.js';
import { Notes, type NodeNotes, type NoteReads, type OrphanNotes, type RemovalConfirmations, type SummaryNotes, type TimelineNotes } from './coordination/notes.js';
import { ScriptRunner } from './coordination/scripts.js';
import { Signals, type CouldNotAskSignals, type PauseSignals, type QueueSentinel, type SignalReads, type StoreOutageSignal } from './coordination/signals.js';

export type { Asked, Claim, ConsumerLocks, MemoReads, RevisionNotes } from './coordination/locks.js';
export type { NodeNotes, NotedEntry, NoteReads, OrphanNotes, RemovalConfirmations, SummaryNotes, TimelineNotes } from './coordination/notes.js';
export type { CouldNotAskSignals, PauseSignals, QueueSentinel, SignalReads, StoreOutageSignal } from './coordination/signals.js';
export type { CheckMemo, NodesNote, NoteNode, OrphanReport, Pause } from './coordination/values.js';
export type { LayoutMarks, ShardLayout } from './coordination/layout.js';
export type { ContestReads, ProviderContests } from './coordination/contests.js';
export { holdfastPrefix } from './coordination/keys.js';
export type { DueEntry, SettledEntry, TakenEntry } from './coordination/due.js';
export type { DueSet } from './coordination/due.js';
export { TIMELINE_CAP, TIMELINE_READ } from './coordination/notes.js';

/** What a record's writer tells the coordination: its revision and its brief. */
export interface RecordNotes extends RevisionNotes, SummaryNotes {}

/** Everything the status reads. */
export interface StatusReads extends NoteReads, SignalReads, MemoReads, ContestReads {}

/** All of it, for the composition root and the command line. */
export interface Coordination
  extends ConsumerLocks, RevisionNotes, MemoReads, PauseSignals, CouldNotAskSignals, QueueSentinel, StoreOutageSignal, SignalReads, SummaryNotes, TimelineNotes, OrphanNotes, NodeNotes, RemovalConfirmations, NoteReads, ContestReads {}

/** One shard's coordination, with its layout marks (see `sharded-coordination.ts`). */
export interface ShardCoordination extends Coordination, LayoutMarks {}

/** The methods of `part`, bound to it: what lets the parts sit side by side in one object. */
function methodsOf<T extends object>(part: T): T {
  const names = Object.getOwnPropertyNames(Object.getPrototypeOf(part)).filter((name) => name !== 'constructor');
  return Object.fromEntries(names.map((name) => [name, (part[name as keyof T] as (...args: unknown[]) => unknown).bind(part)])) as T;
}

/** The coordination on `redis` under `prefix` (see `holdfastPrefix`). */
export function createCoordination(redis: QueueRedis, prefix: string): ShardCoordination {
  const keys = coordinationKeys(prefix);
  const context = { redis, keys, scripts: new ScriptRunner(redis, keys) };
  return {
    ...methodsOf<ConsumerLocks & RevisionNotes & MemoReads>(new Locks(context)),
    ...methodsOf<PauseSignals & CouldNotAskSignals & QueueSentinel & StoreOutageSignal & SignalReads>(new Signals(context)),
    ...methodsOf<SummaryNotes & TimelineNotes & OrphanNotes & NodeNotes & RemovalConfirmations & NoteReads>(new Notes(context)),
    ...methodsOf<LayoutMarks>(new Layout(context)),
    ...methodsOf<ContestReads>(new Contests(context)),
  };
}

/** The due set of one shard, on `redis` under `prefix` (see `holdfastPrefix` and `due-waits.ts`). */
export function createDueSet(redis: QueueRedis, prefix: string): DueSet {
  const keys = coordinationKeys(prefix);
  return new DueSet({ redis, keys, scripts: new ScriptRunner(redis, keys) });
}

/** The key of the due set's revisions under `prefix`: what the status asks, beside BullMQ's keys (`queued-checks.ts`). */
export function dueRevsKey(prefix: string): string {
  return coordinationKeys(prefix).dueRevs;
}
