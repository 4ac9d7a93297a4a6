/**
 * A job's working copy of one consumer's record, and the order in which it is written:
 *
 * 1. the queue's Redis forgets the record's revision (a routine check that comes meanwhile
 *    reads the record instead of trusting its ticket);
 * 2. the record is written (created, the first time), only when something durable changed:
 *    the machine, the desired spec, or an effect about to start;
 *    and then its summary (for the status) in the queue's Redis;
 * 3. once the job is done, the wait the machine asked for is scheduled as a job carrying the
 *    new revision, and the revision is remembered again.
 *
 * What the log says about a change is said once the record says so.
 */
import type { ConsumerStateName } from '../machines/consumer-machine.js';
import { persist, samePersisted, type ConsumerSnapshot, type PersistedConsumer, type Wait } from '../machines/machine-step.js';
import type { Logger } from '../src/logging/logger.js';
import type { RecordNotes } from '../src/queue/coordination.js';
import type { CheckTicket, ConsumerQueue } from '../src/queue/consumer-queue.js';
import type { ConsumerRecord, DesiredSpec, HistoryEntry, LastCheck, RefusedSpec, TimerRecord } from '../src/store/consumer-record.js';
import { encodeMachine } from '../src/store/record-codec.js';
import { summaryOf } from '../src/queue/summarize.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { ConsumerStore } from '../src/store/consumer-store.js';

export interface DraftDeps {
  store: Pick<ConsumerStore, 'insert' | 'save' | 'delete'>;
  queue: Pick<ConsumerQueue, 'scheduleWaits'>;
  coordination: RecordNotes;
  now: () => Date;
  /** Told of every state change (the metrics); in process. */
  observer?: Pick<WorkObserver, 'transition'>;
}

export class RecordDraft {
  private rev: number;
  private history: HistoryEntry[];
  private saved: PersistedConsumer;
  private timer: TimerRecord | null;
  private desiredAt: number;
  private delivered: { spec: DesiredSpec; at: number } | undefined;
  private appliedAt: Date | undefined;
  private lastAppliedAt: Date | null;
  private lastCheck: LastCheck | undefined;
  /** A refused spec to record (null: the refusal is over); undefined: unchanged. */
  private refusedChange: RefusedSpec | null | undefined;
  /** The refused spec the record holds, as last written. */
  private refusedKept: RefusedSpec | null;
  /** The record's last check and state's start, as last written. */
  private checkedLast: LastCheck | null;
  private since: Date;
  private written = false;
  private raised = false;
  private sayings: Array<() => void> = [];

  /** The desired spec the machine works with. */
  desired: DesiredSpec;

  constructor(
    private readonly record: ConsumerRecord,
    /** The record is not stored yet (a newly declared consumer). */
    private readonly isNew: boolean,
    private readonly deps: DraftDeps,
    private readonly log: Logger,
  ) {
    this.rev = record.rev;
    this.history = record.history;
    this.saved = record.machine;
    this.timer = record.timer;
    this.desired = record.desired;
    this.desiredAt = record.desiredAt;
    this.lastAppliedAt = record.appliedAt;
    this.checkedLast = record.lastCheck;
    this.since = record.stateSince;
    this.refusedKept = record.refused ?? null;
  }

  get key(): string {
    return this.record._id;
  }

  get state(): ConsumerStateName {
    return this.saved.state;
  }

  /** The revision the record is at (as this job last wrote or read it). */
  get revision(): number {
    return this.rev;
  }

  /** Whether this job wrote the record. */
  get wrote(): boolean {
    return this.written;
  }

  /** The wait the machine asked for in this job and still rests in, written or not. */
  get pendingWait(): TimerRecord | null {
    return this.raised ? this.timer : null;
  }

  /** When the sync read the desired spec the record holds. */
  get desiredReadAt(): number {
    return this.desiredAt;
  }

  /** A desired spec delivered by the sync (read at `at`). */
  deliver(spec: DesiredSpec, at: number): void {
    this.desired = spec;
    this.desiredAt = at;
    this.delivered = { spec, at };
    if (this.record.refused) this.refusedChange = null;
  }

  /** A spec the policy refuses, delivered (read at `at`) to a consumer that keeps its accepted one. */
  refuse(spec: DesiredSpec, at: number): void {
    this.desiredAt = at;
    this.delivered = { spec: this.desired, at };
    this.refusedChange = { source: spec.source, problems: [...spec.problems] };
  }

  /** The wait the machine asked for (null: cancelled; undefined: unchanged). */
  wait(request: Wait | null | undefined): void {
    if (request === null) this.timer = null;
    else if (request) this.timer = { epoch: this.rev, wait: request.name, dueAt: new Date(this.deps.now().getTime() + request.ms) };
    if (request !== undefined) this.raised = request !== null;
  }

  applied(at: Date): void {
    this.appliedAt = at;
    this.lastAppliedAt = at;
  }

  /** When the spec was last applied (ms since the epoch), if ever. */
  get appliedAtMs(): number | null {
    return this.lastAppliedAt?.getTime() ?? null;
  }

  checked(check: LastCheck): void {
    this.lastCheck = check;
  }

  /** Something to say once the record says so. */
  say(saying: () => void): void {
    this.sayings.push(saying);
  }

  /**
   * Writes the record if anything durable changed (or an effect follows: `effectUntil`), then
   * says what it recorded.
   */
  async save(snapshot: ConsumerSnapshot, effectUntil: Date | null): Promise<void> {
    const machine = persist(snapshot);
    const moved = !samePersisted(machine, this.saved);
    if (!moved && !this.delivered && !this.appliedAt && effectUntil === null && !this.isNewUnsaved && this.refusedChange === undefined) return this.speak();
    const now = this.deps.now();
    const first = this.isNewUnsaved;
    if (!this.written) await this.deps.coordination.forgetRevision(this.key);
    const transition: HistoryEntry | undefined =
      machine.state !== this.saved.state ? { at: now, from: this.saved.state, to: machine.state, reason: machine.context.reason } : undefined;
    const timer = effectUntil === null && this.timer ? { ...this.timer, epoch: this.rev + 1 } : null;
    if (this.isNewUnsaved) {
      await this.deps.store.insert({
        ...this.record,
        desired: this.desired,
        desiredAt: this.desiredAt,
        machine,
        rev: 1,
        timer,
        effectUntil,
        appliedAt: this.appliedAt ?? null,
        lastCheck: this.lastCheck ?? null,
        history: transition ? [transition] : [],
        stateSince: now,
        updatedAt: now,
      });
      this.rev = 1;
    } else {
      this.rev = await this.deps.store.save(
        this.key,
        this.rev,
        {
          ...(moved ? { machine } : {}),
          ...(transition ? { transition } : {}),
          ...(this.delivered ? { desired: this.delivered } : {}),
          ...(this.appliedAt ? { appliedAt: this.appliedAt } : {}),
          ...(this.lastCheck ? { lastCheck: this.lastCheck } : {}),
          ...(this.refusedChange !== undefined ? { refused: this.refusedChange } : {}),
          timer,
          effectUntil,
        },
        this.history,
        now,
      );
    }
    this.written = true;
    if (transition || first) this.since = now;
    this.checkedLast = this.lastCheck ?? this.checkedLast;
    if (this.refusedChange !== undefined) this.refusedKept = this.refusedChange;
    await this.deps.coordination.noteSummaries([
      [this.key, summaryOf({ rev: this.rev, machine, stateSince: this.since, desired: this.desired, timer, lastCheck: this.checkedLast, refused: this.refusedKept, history: transition ? [...this.history, transition] : this.history })],
    ]);
    if (transition) {
      this.deps.observer?.transition(this.record.provider, transition, this.history);
      this.history = [...this.history, transition];
      const { from, to, reason } = transition;
      this.sayings.push(() => this.log.info({ from, to, reason }, `${from} → ${to}${reason ? `: ${reason}` : ''}`));
    }
    this.saved = machine;
    this.timer = timer;
    this.delivered = undefined;
    this.appliedAt = undefined;
    this.lastCheck = undefined;
    this.refusedChange = undefined;
    this.speak();
  }

  private get isNewUnsaved(): boolean {
    return this.isNew && !this.written;
  }

  private speak(): void {
    for (const saying of this.sayings) saying();
    this.sayings = [];
  }

  /** After the last save: the wait's job at the new revision, then the revision remembered. */
  async finish(): Promise<void> {
    if (!this.written) return;
    await this.scheduleWait(this.timer);
    await this.deps.coordination.rememberRevision(this.key, this.rev);
  }

  /**
   * A stale job met this record: makes sure the record's own wait has its job (a worker that
   * died between writing the record and scheduling it left none), and remembers the revision.
   */
  async reschedule(): Promise<void> {
    if (this.record.effectUntil === null) await this.scheduleWait(this.record.timer);
    await this.deps.coordination.rememberRevision(this.key, this.rev);
  }

  private async scheduleWait(timer: TimerRecord | null): Promise<void> {
    if (!timer) return;
    const ticket: CheckTicket = {
      machine: encodeMachine(this.saved),
      spec: { login: this.desired.login, values: this.desired.values, secretPath: this.desired.secretPath, specHash: this.desired.specHash },
      appliedAt: this.appliedAtMs,
    };
    await this.deps.queue.scheduleWaits([{ key: this.key, timer, ticket }], this.deps.now());
  }

  /** The consumer is removed: its record and everything the queue's Redis knew of it go. */
  async delete(): Promise<void> {
    if (!this.isNewUnsaved) await this.deps.store.delete(this.key, this.rev);
    await this.deps.coordination.forgetConsumer(this.key, this.record.provider);
    this.speak();
  }
}
