/**
 * A run's working copy of one consumer's record: what its steps changed ({@link StepNotes}), and
 * how the record is written when the persistence edge (`consumer-edge.ts`, its only writer) says so:
 *
 * 1. the queue's Redis forgets the record's revision (a routine check that comes meanwhile
 *    reads the record instead of trusting its ticket);
 * 2. the record is written (created, the first time), only when something durable changed:
 *    the machine, the desired spec, or an effect about to start; what was written is handed
 *    back ({@link Wrote}) for the edge to note (the brief, the timeline, the metrics).
 *
 * What the log says about a change is said once the record says so.
 */
import type { ConsumerStateName } from '../machines/consumer-machine.js';
import { firstCheckDelay } from '../machines/delays.js';
import {
  firstSnapshot,
  persist,
  samePersisted,
  type ConsumerSnapshot,
  type PersistedConsumer,
  type Wait,
} from '../machines/machine-step.js';
import type { Logger } from '../src/logging/logger.js';
import type { RevisionNotes } from '../src/queue/coordination.js';
import { checkTicket, type CheckTicket } from '../src/schedule/consumer-queue.js';
import type {
  ConsumerRecord,
  DesiredSpec,
  HistoryEntry,
  LastCheck,
  RefusedSpec,
  WaitRecord,
} from '../src/store/consumer-record.js';
import type { ConsumerBrief } from '../src/queue/consumer-brief.js';
import { briefOf } from '../src/queue/brief-of.js';
import type { ConsumerStore, RecordChange } from '../src/store/consumer-store.js';
import { causeAfter, nodeOf, type TransitionCause } from '../src/store/transition-cause.js';
import { consumerIdOf } from '../src/store/consumer-key.js';
import type { ProviderRuntime } from './provider-runtime.js';
import type { StepNotes } from './step-notes.js';

export interface DraftDeps {
  store: Pick<ConsumerStore, 'insert' | 'save' | 'delete'>;
  coordination: { readonly locks: RevisionNotes };
  now: () => Date;
}

/** A write made: what the edge notes of it. */
export interface Wrote {
  /** The record's brief, for the status. */
  brief: ConsumerBrief;
  /** The transition written, if the state changed, and the history before it. */
  transition: HistoryEntry | undefined;
  history: readonly HistoryEntry[];
}

/** What this job changed and has not written yet. */
interface Pending {
  /** A desired spec delivered by the sync, and when it read it. */
  delivered?: { spec: DesiredSpec; at: number };
  appliedAt?: Date;
  check?: LastCheck;
  /** A refused spec to record; null: the refusal is over. */
  refusal?: RefusedSpec | null;
}

/** The record as the store holds it: as this job read it, or last wrote it. */
interface Written {
  rev: number;
  machine: PersistedConsumer;
  history: HistoryEntry[];
  since: Date;
  check: LastCheck | null;
  refusal: RefusedSpec | null;
}

/** One write about to be made: the machine, its transition if the state changed, the wait and the effect's horizon. */
interface Write {
  machine: PersistedConsumer;
  moved: boolean;
  transition: HistoryEntry | undefined;
  timer: WaitRecord | null;
  effectUntil: Date | null;
  now: Date;
}

export class RecordDraft implements StepNotes {
  private written: Written;
  private pending: Pending = {};
  /** The wait the machine rests in: as written, or as it asked since. */
  private wait: WaitRecord | null;
  private desiredAt: number;
  /** When the spec was last applied, written or not. */
  private lastApplied: Date | null;
  private hasWritten = false;
  /** The machine asked for a wait in this job (and has not cancelled it since). */
  private waitAsked = false;
  /** This job applied the consumer for the first time. */
  private firstApply = false;
  private sayings: Array<() => void> = [];
  /** Who causes the transitions this job writes (`src/store/transition-cause.ts`); a loss makes what follows a heal. */
  private cause: TransitionCause = 'desired';
  /** The node(s) of the backend this job's transitions concern, when a check named them. */
  private node: string | undefined;

  /** The desired spec the machine works with. */
  desired: DesiredSpec;

  constructor(
    private readonly record: ConsumerRecord,
    /** The record is not stored yet (a newly declared consumer). */
    private readonly isNew: boolean,
    private readonly deps: DraftDeps,
    private readonly log: Logger,
    /**
     * A newly declared consumer's record made again after a removal whose mark the claim read: cleared once it is
     * written.
     */
    private readonly removalMarked = false,
    /**
     * Whether the queue's Redis may know a revision of the record, to forget before the first write; false when the
     * claim found none for a record not stored yet (a cold start's new consumers: one command fewer each).
     */
    private readonly revisionKnown = true,
  ) {
    this.written = {
      rev: record.rev,
      machine: record.machine,
      history: record.history,
      since: record.stateSince,
      check: record.lastCheck,
      refusal: record.refused ?? null,
    };
    this.wait = record.timer;
    this.desired = record.desired;
    this.desiredAt = record.desiredAt;
    this.lastApplied = record.appliedAt;
  }

  get key(): string {
    return this.record._id;
  }

  /** The consumer's provider, by name. */
  get provider(): string {
    return this.record.provider;
  }

  get state(): ConsumerStateName {
    return this.written.machine.state;
  }

  /** The revision the record is at (as this job last wrote or read it). */
  get rev(): number {
    return this.written.rev;
  }

  /** Whether this job wrote the record. */
  get wrote(): boolean {
    return this.hasWritten;
  }

  /** The wait the machine asked for in this job and still rests in, written or not. */
  get pendingWait(): WaitRecord | null {
    return this.waitAsked ? this.wait : null;
  }

  /** When the sync read the desired spec the record holds. */
  get desiredReadAt(): number {
    return this.desiredAt;
  }

  /** Who causes the transitions written from now on. */
  causedBy(cause: TransitionCause): void {
    this.cause = cause;
  }

  /** The node(s) a check found not holding the consumer: named in the transitions written from now on. */
  concerns(node: string): void {
    this.node = nodeOf(node);
  }

  /** A desired spec delivered by the sync (read at `at`). */
  deliver(spec: DesiredSpec, at: number): void {
    this.desired = spec;
    this.desiredAt = at;
    this.pending.delivered = { spec, at };
    if (this.record.refused) this.pending.refusal = null;
  }

  /** A spec the policy refuses, delivered (read at `at`) to a consumer that keeps its accepted one. */
  refuse(spec: DesiredSpec, at: number): void {
    this.desiredAt = at;
    this.pending.delivered = { spec: this.desired, at };
    this.pending.refusal = { source: spec.source, problems: [...spec.problems] };
  }

  /** The wait the machine asked for (null: cancelled; undefined: unchanged). */
  setWait(request: Wait | null | undefined): void {
    // the first check after a consumer's first apply comes spread over the interval (see `firstCheckDelay`)
    const ms =
      request && request.name === 'verify' && this.firstApply
        ? firstCheckDelay(this.record._id, { verifyEveryMs: request.ms })
        : request?.ms;
    if (request === null) this.wait = null;
    else if (request)
      this.wait = { rev: this.written.rev, wait: request.name, dueAt: new Date(this.deps.now().getTime() + ms!) };
    if (request !== undefined) this.waitAsked = request !== null;
  }

  applied(at: Date): void {
    this.firstApply = this.lastApplied === null;
    this.pending.appliedAt = at;
    this.lastApplied = at;
  }

  /** When the spec was last applied (ms since the epoch), if ever. */
  get appliedAtMs(): number | null {
    return this.lastApplied?.getTime() ?? null;
  }

  checked(check: LastCheck): void {
    this.pending.check = check;
  }

  /** Something to say once the record says so. */
  say(saying: () => void): void {
    this.sayings.push(saying);
  }

  /**
   * Writes the record if anything durable changed (or an effect follows: `effectUntil`), then
   * says what it recorded; what was written, or undefined when nothing was. Called by the edge.
   */
  async save(snapshot: ConsumerSnapshot, effectUntil: Date | null): Promise<Wrote | undefined> {
    const machine = persist(snapshot);
    const before = this.written.machine;
    const moved = !samePersisted(machine, before);
    const { delivered, appliedAt, refusal } = this.pending;
    if (!moved && !delivered && !appliedAt && effectUntil === null && !this.isNewUnsaved && refusal === undefined) {
      this.speak();
      return undefined;
    }
    const now = this.deps.now();
    if (!this.hasWritten && this.revisionKnown) await this.deps.coordination.locks.forgetRevision(this.key);
    const transition = machine.state !== before.state ? this.transition(before.state, machine, now) : undefined;
    const timer = effectUntil === null && this.wait ? { ...this.wait, rev: this.written.rev + 1 } : null;
    const write: Write = { machine, moved, transition, timer, effectUntil, now };
    const first = this.isNewUnsaved;
    const rev = first ? await this.insert(write) : await this.update(write);
    return this.wroteDown(rev, write, first);
  }

  /** The transition to `machine` from `from`: its reason, who caused it and where. */
  private transition(from: ConsumerStateName, machine: PersistedConsumer, at: Date): HistoryEntry {
    const entry: HistoryEntry = {
      at,
      from,
      to: machine.state,
      reason: machine.context.reason,
      by: this.cause,
      ...(this.node !== undefined ? { node: this.node } : {}),
    };
    this.cause = causeAfter(this.cause, machine.state);
    return entry;
  }

  /** The first write of a newly declared consumer's record. */
  private async insert({ machine, transition, timer, effectUntil, now }: Write): Promise<number> {
    await this.deps.store.insert({
      ...this.record,
      desired: this.desired,
      desiredAt: this.desiredAt,
      machine,
      rev: 1,
      timer,
      effectUntil,
      appliedAt: this.pending.appliedAt ?? null,
      lastCheck: this.pending.check ?? null,
      history: transition ? [transition] : [],
      stateSince: now,
      updatedAt: now,
    });
    // the record tells from now on which specs are older (its `desiredAt`): the mark is not needed
    if (this.removalMarked) await this.deps.coordination.locks.clearRemoved(this.key);
    return 1;
  }

  /** A write of what changed, compare-and-swap on the revision; the new revision. */
  private update({ machine, moved, transition, timer, effectUntil, now }: Write): Promise<number> {
    const { delivered, appliedAt, check, refusal } = this.pending;
    const change: RecordChange = {
      ...(moved ? { machine } : {}),
      ...(transition ? { transition } : {}),
      ...(delivered ? { desired: delivered } : {}),
      ...(appliedAt ? { appliedAt } : {}),
      ...(check ? { lastCheck: check } : {}),
      ...(refusal !== undefined ? { refused: refusal } : {}),
      timer,
      effectUntil,
    };
    return this.deps.store.save(this.key, this.written.rev, change, this.written.history, now);
  }

  /** The record is written: its brief (from the consumer in hand) and its transition, for the edge; said. */
  private wroteDown(rev: number, { machine, transition, timer, now }: Write, first: boolean): Wrote {
    const { written, pending } = this;
    this.hasWritten = true;
    const since = transition || first ? now : written.since;
    const check = pending.check ?? written.check;
    const refusal = pending.refusal !== undefined ? pending.refusal : written.refusal;
    const brief = briefOf({
      rev,
      machine,
      stateSince: since,
      desired: this.desired,
      timer,
      lastCheck: check,
      refused: refusal,
      history: transition ? [...written.history, transition] : written.history,
    });
    let history = written.history;
    if (transition) {
      history = [...history, transition];
      const { from, to, reason } = transition;
      // a first apply's moves at debug: the progress line (`src/status/first-apply-reports.ts`) says them together
      this.sayings.push(() =>
        this.log[this.isNew && (to === 'applying' || to === 'held') ? 'debug' : 'info'](
          { from, to, reason },
          `${from} → ${to}${reason ? `: ${reason}` : ''}`,
        ),
      );
    }
    this.written = { rev, machine, history, since, check, refusal };
    this.wait = timer;
    this.pending = {};
    this.speak();
    return { brief, transition, history: written.history };
  }

  private get isNewUnsaved(): boolean {
    return this.isNew && !this.hasWritten;
  }

  private speak(): void {
    for (const saying of this.sayings) saying();
    this.sayings = [];
  }

  /** The wait the record says, as this run last wrote it (or read it: a wait a stale job makes sure of). */
  get writtenWait(): WaitRecord | null {
    if (!this.hasWritten) return this.record.effectUntil === null ? this.record.timer : null;
    return this.wait;
  }

  /** The ticket of the record as written: what its wait carries. */
  ticket(): CheckTicket {
    return checkTicket(this.written.machine, this.desired, this.lastApplied);
  }

  /**
   * The consumer is removed: its removal's time marked first (no spec read before it may make
   * the record again, see `ConsumerRun.made`), then its record and everything else the queue's
   * Redis knew of it go.
   */
  async delete(): Promise<void> {
    await this.deps.coordination.locks.markRemoved(this.key, this.desiredAt);
    if (!this.isNewUnsaved) await this.deps.store.delete(this.key, this.written.rev);
    await this.deps.coordination.locks.forgetConsumer(this.key, this.record.provider);
    this.speak();
  }
}

/** A newly declared consumer's record (read at `at`), not stored yet. */
export function newRecord(
  key: string,
  provider: ProviderRuntime,
  desired: DesiredSpec,
  at: number,
  now: Date,
): ConsumerRecord {
  return {
    _id: key,
    provider: provider.config.name,
    consumerId: consumerIdOf(key),
    desired,
    desiredAt: at,
    machine: persist(firstSnapshot(provider.machine, key)),
    stateSince: now,
    rev: 0,
    appliedAt: null,
    timer: null,
    effectUntil: null,
    lastCheck: null,
    history: [],
    createdAt: now,
    updatedAt: now,
  };
}
