/**
 * What workers share besides jobs, in the queue's Redis, and all of holdfast's own knowledge
 * of it (BullMQ keeps its own). A {@link Coordination} holds its parts side by side, each a
 * class in `coordination/` behind a narrow interface, and each shard has its due set (`due.ts`,
 * sealed and read through `src/schedule/due-waits.ts`):
 *
 * - **`locks`** (`locks.ts`): each consumer's lock, its revision as last written and what its
 *   checks learned;
 * - **`signals`** (`signals.ts`): pauses and probes, could-not-ask sets, the record store's
 *   outage and the sentinel whose absence says the queue's Redis forgot everything;
 * - **`notes`** (`notes.ts`): records in brief, when each consumer was last asked, orphans,
 *   confirmed removals and each provider's timeline;
 * - **`contests`** (`contests.ts`): the contested consumers, counted with a heal's timeline
 *   note (`contest-script.ts`);
 * - **`layout`** (`layout.ts`, one shard's only): the layout its entries were written under.
 *
 * They share only the key table (`keys.ts`), the script table (`scripts.ts`) and the checked
 * codecs of what they read (`values.ts`). Each client depends on the parts, and the slices of
 * them, it uses (`{ locks: ConsumerLocks; notes: TimelineNotes }`).
 */
import type { QueueRedis } from './bull-connection.js';
import { DueSet } from './coordination/due.js';
import { coordinationKeys } from './coordination/keys.js';
import { Contests, type ContestReads } from './coordination/contests.js';
import { Layout, type LayoutMarks } from './coordination/layout.js';
import { Locks, type LocksPart, type MemoReads, type RevisionNotes } from './coordination/locks.js';
import { Notes, type NoteReads, type NotesPart, type BriefNotes } from './coordination/notes.js';
import { ScriptRunner } from './coordination/scripts.js';
import { Signals, type SignalReads, type SignalsPart } from './coordination/signals.js';
import type { NoteSeal } from './note-seal.js';

export type {
  Asked,
  BatchLocks,
  Claim,
  ConsumerLocks,
  LockClaim,
  LockRelease,
  LocksPart,
  MemoReads,
  Released,
  RevisionNotes,
} from './coordination/locks.js';
export type {
  FailedLoginNotes,
  NodeNotes,
  NotedEntry,
  NotedStates,
  NoteReads,
  NotesPart,
  OrphanNotes,
  RemovalConfirmation,
  RemovalConfirmations,
  BriefNotes,
  TimelineNotes,
} from './coordination/notes.js';
export type {
  CouldNotAskSignals,
  PauseSignals,
  QueueSentinel,
  SignalReads,
  SignalsPart,
  StoreOutageSignal,
  SuspectListing,
  SuspectSignals,
  Suspects,
} from './coordination/signals.js';
export type {
  CheckMemo,
  FailedLoginEvent,
  FailedLoginsNote,
  NodesNote,
  NoteNode,
  OrphanReport,
  Pause,
  SuspectEvent,
  TurnedAwayConsumer,
} from './coordination/values.js';
export { FAILED_LOGIN_EVENTS, FAILED_LOGINS_LISTED } from './coordination/values.js';
export type { LayoutMarks, ShardLayout } from './coordination/layout.js';
export type { ContestReads, ProviderContests } from './coordination/contests.js';
export { holdfastPrefix } from './coordination/keys.js';
export { NoteSeal, type NoteKind } from './note-seal.js';
export type { DueEntry, SettledEntry, TakenEntry } from './coordination/due.js';
export type { DueSet } from './coordination/due.js';
export { TIMELINE_CAP, TIMELINE_READ } from './coordination/notes.js';

/** All of it, for the composition root and the command line: each part as a field. */
export interface Coordination {
  readonly locks: LocksPart;
  readonly signals: SignalsPart;
  readonly notes: NotesPart;
  readonly contests: ContestReads;
}

/** One shard's coordination, with its layout marks (see `sharded-coordination.ts`). */
export interface ShardCoordination extends Coordination {
  readonly layout: LayoutMarks;
}

/** What a record's writer tells the coordination: its revision and its brief. */
export interface RecordNotes {
  readonly locks: RevisionNotes;
  readonly notes: BriefNotes;
}

/** Everything the status reads. */
export interface StatusReads {
  readonly locks: MemoReads;
  readonly signals: SignalReads;
  readonly notes: NoteReads;
  readonly contests: ContestReads;
}

/** The coordination on `redis` under `prefix` (see `holdfastPrefix`), its notes sealed with `seal`. */
export function createCoordination(redis: QueueRedis, prefix: string, seal: NoteSeal): ShardCoordination {
  const keys = coordinationKeys(prefix);
  const context = { redis, keys, scripts: new ScriptRunner(redis, keys) };
  return {
    locks: new Locks(context, seal),
    signals: new Signals(context),
    notes: new Notes(context, seal),
    contests: new Contests(context),
    layout: new Layout(context),
  };
}

/** The due set of one shard, on `redis` under `prefix` (see `holdfastPrefix` and `src/schedule/due-waits.ts`). */
export function createDueSet(redis: QueueRedis, prefix: string): DueSet {
  const keys = coordinationKeys(prefix);
  return new DueSet({ redis, keys, scripts: new ScriptRunner(redis, keys) });
}

/**
 * The key of the due set's revisions under `prefix`: what the status asks, beside BullMQ's keys (`src/schedule/queued-checks.ts`).
 */
export function dueRevsKey(prefix: string): string {
  return coordinationKeys(prefix).dueRevs;
}
