/**
 * One job's work on one consumer, under the consumer's lock ({@link ConsumerRun.underLock}: the
 * lock tells what the queue's Redis knows, the record's revision and what its checks learned,
 * and its release keeps what this job's checks learn), in named steps:
 *
 * 1. {@link ConsumerRun.routine}: a wait's job whose ticket is current runs a routine check on
 *    the ticket (`routine-check.ts`); when nothing durable changed, the same job runs again later;
 *    a check that finds a served consumer not held heals it there when what it applies again is
 *    what the record says was applied (`quiet-heal.ts`): no store read or write either;
 *    nothing past this step runs while the record store does not answer;
 * 2. {@link ConsumerRun.load}: the record is read (or a newly declared consumer's is made);
 * 3. {@link ConsumerRun.eventsFor}: what the job tells the machine, by the job's kind;
 * 4. {@link ConsumerRun.drive}: the machine steps one event at a time until it rests;
 *    {@link ConsumerRun.perform} performs the effect a step asks for (writing the record first,
 *    but for a check) and its result is the next event;
 * 5. {@link ConsumerRun.rest}: the record is written as the machine rests and its wait becomes
 *    a job carrying the new revision; a removed consumer's record is deleted.
 *
 * Each event is stepped once: what a routine check already stepped on the ticket is carried on
 * against the record, when the record still holds what the ticket holds.
 *
 * Before any apply or removal the spec acted on is checked against its provider's configuration
 * (`spec-guard.ts`): a spec it refuses is an `APPLY_REFUSED`, a removal it refuses leaves the
 * login alone.
 */
import { randomUUID } from 'node:crypto';
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { EFFECT_STATES, type EffectType } from '../machines/consumer-machine.js';
import { verifyDelay } from '../machines/delays.js';
import { desiredEvent, keepsAccepted } from '../machines/desired-event.js';
import {
  firstSnapshot,
  persist,
  restore,
  samePersisted,
  step,
  waitEnded,
  type ConsumerSnapshot,
  type PersistedConsumer,
  type Step,
} from '../machines/machine-step.js';
import { HoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { Asked, CheckMemo, Claim, ConsumerLocks, TimelineNotes } from '../src/queue/coordination.js';
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';
import { consumerIdOf } from '../src/store/consumer-key.js';
import { isUnreadable, type ConsumerRecord, type DesiredSpec } from '../src/store/consumer-record.js';
import type { ConsumerStore } from '../src/store/consumer-store.js';
import type { EffectInput, Effects } from './effects.js';
import { again, retryLater, type Found, type JobOutcome } from './job-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { RecordDraft, type DraftDeps } from './record-draft.js';
import { healQuietly, healsQuietly } from './quiet-heal.js';
import {
  answered,
  lastCheckOf,
  memoOf,
  routineCheck,
  type Checked,
  type Taken,
  type WaitJob,
} from './routine-check.js';
import { guardSpec } from './spec-guard.js';
import { jobCause, type TransitionCause } from '../src/store/transition-cause.js';

/** Time added to an effect's deadline for the lock (and the record's effect horizon) that covers it. */
export const LOCK_MARGIN_MS = 10_000;

/**
 * A lock claimed or extended this recently is not extended again before an effect: it still
 * covers the effect's deadline with all but this much of {@link LOCK_MARGIN_MS} to spare, and only
 * the queue's Redis losing it could end it sooner, which an extend just before cannot rule out
 * either. A heal found by a routine check saves two round trips this way.
 */
export const FRESH_LOCK_MS = 1_000;

/** How long the lock on a consumer (and the record's horizon for an effect begun) lasts. */
export function lockMsOf(provider: ProviderRuntime): number {
  return provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS;
}

export interface RunDeps extends DraftDeps {
  store: DraftDeps['store'] & Pick<ConsumerStore, 'get'>;
  coordination: DraftDeps['coordination'] & { readonly locks: ConsumerLocks; readonly notes: TimelineNotes };
  effects: Effects;
  logger: Logger;
  /** Whether the record store is known not to answer (see `src/store/store-watch.ts`). */
  storeDown?: () => boolean;
  observer?: DraftDeps['observer'] & Partial<Pick<WorkObserver, 'lateness'>>;
}

/** The consumer's lock, as the job took it. */
export interface Lock {
  /** What the queue's Redis knew of the consumer as the job took its lock. */
  claim: Claim;
  /** Extends the lock; false when it was lost. */
  extend: () => Promise<boolean>;
  /** When (ms since the epoch, this process's clock) the lock was last claimed or extended, taken before asking. */
  heldSince: number;
}

/** What a run's checks learned, for the lock's release. */
interface Learned {
  memo?: CheckMemo | undefined;
  asked?: Asked;
  /** What the run's last check found, for the round that ran it to count. */
  found?: Found;
}

/** The record as loaded, and the draft of what the run writes to it. */
interface Loaded {
  kind: 'loaded';
  record: ConsumerRecord;
  consumer: PersistedConsumer;
  draft: RecordDraft;
  /** The record was left mid-effect (its worker died): its effect is performed again first. */
  inEffect: boolean;
}

/** What the machine is told: events, or the steps a routine check took already. */
type Start = { kind: 'events'; events: ConsumerEvent[] } | { kind: 'taken'; taken: Taken };

type JobOf<K extends ConsumerJobData['kind']> = Extract<ConsumerJobData, { kind: K }>;
type StartFor<K extends ConsumerJobData['kind']> = (
  job: JobOf<K>,
  at: Loaded,
) => Promise<Start | JobOutcome> | Start | JobOutcome;

function foundOf(event: ConsumerEvent): Found | undefined {
  switch (event.type) {
    case 'HELD':
      return 'held';
    case 'CHECK_FAILED':
      return 'could-not-ask';
    case 'NOT_HELD':
    case 'NOT_APPLIED':
    case 'CHANGED':
      return 'lost';
    default:
      return undefined;
  }
}

function askedOf(event: ConsumerEvent): Asked {
  if (event.type === 'CHECK_FAILED') return 'could-not-ask';
  return event.type === 'HELD' || event.type === 'NOT_HELD' ? 'asked' : undefined;
}

const REDO: ConsumerEvent = { type: 'REDO' };

export class ConsumerRun {
  private readonly learnt: Learned = {};
  /** The consumer's logger, made when the record is loaded (a routine check says nothing). */
  private logger: Logger | undefined;
  /** What a routine check stepped on the ticket, for `eventsFor.timer`. */
  private taken: Taken | undefined;
  /** Why a removal left the login on the backend, if it did. */
  private leftBehind: string | undefined;

  private constructor(
    private readonly job: ConsumerJobData,
    /** Whether the job's ticket may be used (see `job-trust.ts`). */
    private readonly ticketTrusted: boolean,
    private readonly provider: ProviderRuntime,
    private readonly deps: RunDeps,
    private readonly lock: Lock,
  ) {}

  private get log(): Logger {
    this.logger ??= this.deps.logger.child({ consumer: this.job.key });
    return this.logger;
  }

  /**
   * Takes the consumer's lock (busy: later), runs the job under it, and releases it with what
   * the run's checks learned, whether the run ends or throws.
   */
  static async underLock(
    job: ConsumerJobData,
    ticketTrusted: boolean,
    provider: ProviderRuntime,
    deps: RunDeps,
  ): Promise<JobOutcome> {
    const lockMs = lockMsOf(provider);
    const token = randomUUID();
    const asked = deps.now().getTime();
    const claim = await deps.coordination.locks.claim(job.key, token, lockMs);
    if (!claim) return retryLater('busy', deps.now());
    const run = new ConsumerRun(job, ticketTrusted, provider, deps, {
      claim,
      extend: () => deps.coordination.locks.extend(job.key, token, lockMs),
      heldSince: asked,
    });
    try {
      const outcome = await run.run();
      return run.learnt.found ? { ...outcome, found: run.learnt.found } : outcome;
    } finally {
      const { memo, asked } = run.learnt;
      const askedAbout = await deps.coordination.locks.release(job.key, provider.config.name, token, memo, asked);
      if (askedAbout !== undefined) provider.fleet.consumers = askedAbout; // the pace of its deep checks
    }
  }

  private async run(): Promise<JobOutcome> {
    const { job, lock } = this;
    if (job.kind === 'timer' && lock.claim.rev !== null && lock.claim.rev > job.rev) return { kind: 'stale' };
    const routine = await this.routine();
    if (routine) return routine;
    if (this.deps.storeDown?.()) return this.storeDown();
    const at = await this.load();
    if (at.kind !== 'loaded') return at;
    const start = await (this.eventsFor[job.kind] as StartFor<typeof job.kind>)(job, at);
    if (start.kind !== 'events' && start.kind !== 'taken') return start;
    return this.rest(at, await this.drive(at, start));
  }

  /** A routine check, when the job's ticket is current: the job's outcome if it is all the job does. */
  private async routine(): Promise<JobOutcome | undefined> {
    const { job, lock, provider, deps } = this;
    if (job.kind !== 'timer' || lock.claim.rev !== job.rev || !this.ticketTrusted) return undefined;
    const { memo } = lock.claim;
    // how late a routine check began (in process, from what the lock told)
    if (memo && job.wait === 'verify')
      deps.observer?.lateness?.(
        provider.config.name,
        deps.now().getTime() - memo.at - verifyDelay(job.key, provider.config.timing),
      );
    const checked = await routineCheck(job, provider, memo, deps.effects, deps.now);
    if (checked.kind === 'unreadable') return undefined;
    const routine: Checked =
      checked.kind === 'taken' && healsQuietly(provider, checked.taken, job.ticket)
        ? await this.healed(job, checked.taken, checked.memo)
        : checked;
    if (routine.kind === 'again') {
      this.learn(routine.memo, routine.event);
      if (routine !== checked) this.learnt.found = 'healed'; // the quiet heal's confirmation
      return again(routine.again);
    }
    if (routine.taken.checked) this.learn(routine.memo, routine.taken.checked.event);
    this.taken = routine.taken;
    return undefined;
  }

  /**
   * A consumer the routine check found not held, applied again as the record says it was
   * (`quiet-heal.ts`): confirmed, the routine check's outcome as if it had found it held (its
   * memo says it was healed); else the steps to carry on against the record.
   */
  private async healed(job: WaitJob, taken: Taken, memo: CheckMemo | undefined): Promise<Checked> {
    const { provider, deps, lock } = this;
    const heal = await healQuietly(
      { key: job.key, provider, ticket: job.ticket, taken, keepLock: (effect) => this.keepLock(effect), log: this.log },
      deps,
    );
    if (heal.kind === 'recorded') {
      this.log.debug({ state: taken.from.state }, `not healed without the record: ${heal.why}; carried on against it`);
      return { kind: 'taken', taken, memo };
    }
    if (heal.kind === 'applied') {
      // the apply's result, fed to the machine against the record as if performed there
      this.log.debug(
        { state: taken.from.state, applied: heal.applied.type },
        'applied again but not confirmed held: carried on against the record',
      );
      const learned = heal.confirmation ? (memoOf(heal.confirmation, job.rev, lock.claim.memo, heal.at) ?? memo) : memo;
      return {
        kind: 'taken',
        taken: { ...taken, checked: { ...taken.checked!, said: true, performed: heal.applied } },
        memo: learned,
      };
    }
    const outcome = answered(
      provider.machine,
      job.rev,
      taken.from,
      taken.ended,
      heal.confirmed,
      lock.claim.memo,
      heal.at,
    );
    if (!outcome.memo) return outcome;
    // the last check's outcome as the status shows it: held, healed from what was found
    return {
      ...outcome,
      memo: { ...outcome.memo, detail: `healed: ${taken.checked!.lastCheck?.detail ?? 'not held'}; applied again` },
    };
  }

  /**
   * The record store does not answer: nothing is done from a record that may be stale. A routine
   * check that ran (its backend asked) comes again after its wait's interval, so that a braking
   * consumer is not asked more often than its brake says; any other job, in a moment.
   */
  private storeDown(): JobOutcome {
    const { job, provider, deps } = this;
    const now = deps.now();
    if (!this.taken) return retryLater('store-down', now);
    return retryLater('store-down', now, {
      until: new Date(now.getTime() + verifyDelay(job.key, provider.config.timing)),
    });
  }

  /** The record (a newly declared consumer's, not stored yet), or why the job stops here. */
  private async load(): Promise<Loaded | JobOutcome> {
    const { job, provider, deps } = this;
    const now = deps.now();
    let record = await deps.store.get(job.key);
    const isNew = record === null;
    if (record === null) {
      if (job.kind !== 'desired') return { kind: 'absent' };
      const made = await this.made(job);
      if (made) return made;
      record = newRecord(job, provider, job.desired!, now);
    }
    if (isUnreadable(record))
      throw new HoldfastError('RECORD_UNREADABLE', `the record of ${job.key} cannot be read: ${record.unreadable}`);
    const consumer = record.machine;
    const inEffect = EFFECT_STATES.has(consumer.state);
    if (inEffect && record.effectUntil && record.effectUntil > now)
      return retryLater('busy', now, { until: record.effectUntil });
    const marked = isNew && this.lock.claim.removedAt !== null;
    const draft = new RecordDraft(record, isNew, deps, this.log, marked);
    draft.causedBy(this.cause);
    return { kind: 'loaded', record, consumer, draft, inEffect };
  }

  /**
   * A desired job that finds no record: a removal marks its time (and ends: nothing to remove);
   * a spec read before the consumer's last removal is dropped, as a spec older than a record's
   * is: jobs for one consumer do not keep their order (a busy one is put back), and a removal
   * deletes the record that would tell. Undefined: the spec makes the record.
   */
  private async made(job: JobOf<'desired'>): Promise<JobOutcome | undefined> {
    if (job.desired === null) {
      await this.deps.coordination.locks.markRemoved(job.key, job.at);
      return { kind: 'absent' };
    }
    const { removedAt } = this.lock.claim;
    if (removedAt === null || job.at > removedAt) return undefined;
    this.log.info(
      { specAt: new Date(job.at).toISOString(), removedAt: new Date(removedAt).toISOString() },
      'a spec read before the consumer was removed came late: dropped; the consumer stays removed',
    );
    return { kind: 'stale' };
  }

  /** What each kind of job tells the machine; a record left mid-effect is told `REDO` first. */
  private readonly eventsFor: { [K in ConsumerJobData['kind']]: StartFor<K> } = {
    timer: async (job, at) => {
      if (at.record.rev !== job.rev) {
        // stale, but the record's own wait may be what a dead worker did not schedule
        await at.draft.reschedule();
        return at.inEffect ? { kind: 'events', events: [REDO] } : { kind: 'stale' };
      }
      const { taken } = this;
      if (taken && !at.inEffect && samePersisted(taken.from, at.consumer)) return { kind: 'taken', taken };
      return { kind: 'events', events: [...(at.inEffect ? [REDO] : []), waitEnded(job.wait, at.consumer.state)] };
    },
    desired: (job, at) => this.delivered(job, at),
    command: (job, at) => ({ kind: 'events', events: [...(at.inEffect ? [REDO] : []), job.event] }),
    redo: (job, at) => {
      if (!at.inEffect) return at.record.rev !== job.rev ? { kind: 'stale' } : { kind: 'events', events: [] };
      return { kind: 'events', events: [REDO] };
    },
  };

  /** A desired spec the sync delivered: the machine's event for it, or kept aside when the policy refuses it. */
  private delivered(job: JobOf<'desired'>, { draft, consumer, inEffect }: Loaded): Start | JobOutcome {
    if (job.at < draft.desiredReadAt) return { kind: 'stale' };
    const redo = inEffect ? [REDO] : [];
    const desired = job.desired ?? { ...draft.desired, removed: true };
    if (keepsAccepted(desired, consumer) && !draft.desired.removed) {
      draft.refuse(desired, job.at);
      const kept = draft.desired.source;
      draft.say(() =>
        this.log.error(
          { state: consumer.state },
          `new spec refused by its provider's policy: ${desired.problems.join('; ')}; the spec accepted at ${kept} stays applied and checked`,
        ),
      );
      return { kind: 'events', events: redo };
    }
    draft.deliver(desired, job.at);
    const event = desiredEvent(desired, consumer.state);
    return { kind: 'events', events: event ? [...redo, event] : redo };
  }

  /** Who causes what this job does (`src/store/transition-cause.ts`). */
  private get cause(): TransitionCause {
    const { job } = this;
    return jobCause(job.kind, job.kind === 'timer' ? job.wait : undefined);
  }

  /** Steps the machine through what it is told, performing each effect it asks for, until it rests. */
  private async drive(at: Loaded, start: Start): Promise<ConsumerSnapshot> {
    if (start.kind === 'taken') return this.follow(at, await this.carryOn(at, start.taken));
    let snapshot = restore(this.provider.machine, at.consumer);
    for (const event of start.events) {
      // an effect a dead worker left is performed again first (a recovery), then what the job says
      at.draft.causedBy(event.type === 'REDO' ? 'recovery' : this.cause);
      snapshot = await this.follow(at, this.move(at, snapshot, event));
    }
    return snapshot;
  }

  /** The steps a routine check took, noted in the draft as if taken here; the last of them. */
  private async carryOn(at: Loaded, { ended, checked }: Taken): Promise<Step> {
    this.note(at, ended);
    if (!checked) return ended;
    // the check was performed before the record was read: its result is fed on the same terms as any effect's
    await this.stillOurs('check');
    if (checked.lastCheck) at.draft.checked(checked.lastCheck);
    if (checked.event.type === 'NOT_HELD' && checked.event.node !== undefined) at.draft.concerns(checked.event.node);
    this.note(at, checked.said ? { ...checked.step, said: [] } : checked.step);
    const { performed } = checked;
    if (!performed) return checked.step;
    // its effect was performed already (a heal not confirmed): its result is fed, not performed again
    if (performed.type === 'APPLIED') at.draft.applied(this.deps.now());
    return this.move(at, checked.step.snapshot, performed);
  }

  /** Performs what each step asks for and steps on its result, until the machine rests. */
  private async follow(at: Loaded, moved: Step): Promise<ConsumerSnapshot> {
    let last = moved;
    while (last.effect) last = this.move(at, last.snapshot, await this.perform(at, last.effect, last.snapshot));
    return last.snapshot;
  }

  private move(at: Loaded, snapshot: ConsumerSnapshot, event: ConsumerEvent): Step {
    if (event.type === 'NOT_HELD' && event.node !== undefined) at.draft.concerns(event.node);
    const moved = step(this.provider.machine, snapshot, event);
    this.note(at, moved);
    return moved;
  }

  /** What a step asks of the record: its wait, and its words, said once the record says so. */
  private note({ draft }: Loaded, moved: Step): void {
    draft.setWait(moved.wait);
    const state = moved.snapshot.value;
    for (const said of moved.said) draft.say(() => this.log[said.level]({ state, ...said.fields }, said.message));
  }

  /** Performs the effect a step asks for, under the lock and while the store answers; its result. */
  private async perform(at: Loaded, effect: EffectType, snapshot: ConsumerSnapshot): Promise<ConsumerEvent> {
    await this.stillOurs(effect);
    return effect === 'check' ? this.check(at, snapshot) : this.change(at, effect, snapshot);
  }

  /**
   * Before an effect: the lock extended unless fresh (else `REVISION_CONFLICT`) and the store answering (else
   * `STORE_UNAVAILABLE`).
   */
  private async stillOurs(effect: EffectType): Promise<void> {
    await this.keepLock(effect);
    if (this.deps.storeDown?.())
      throw new HoldfastError(
        'STORE_UNAVAILABLE',
        `the record store stopped answering before the ${effect} of ${this.job.key}; put back until it answers`,
      );
  }

  /**
   * Before an effect: the lock extended unless fresh (else `REVISION_CONFLICT`); the store is not asked (a heal needs
   * none).
   */
  private async keepLock(effect: EffectType): Promise<void> {
    const { lock } = this;
    const asked = this.deps.now().getTime();
    if (asked - lock.heldSince < FRESH_LOCK_MS) return;
    if (!(await lock.extend()))
      throw new HoldfastError('REVISION_CONFLICT', `lost the lock on ${this.job.key} before ${effect}`);
    lock.heldSince = asked;
  }

  private async check({ draft }: Loaded, snapshot: ConsumerSnapshot): Promise<ConsumerEvent> {
    const { memo } = this.lock.claim;
    const result = await this.deps.effects.check({
      key: this.job.key,
      provider: this.provider,
      spec: draft.desired,
      context: snapshot.context,
      appliedAt: draft.appliedAtMs,
      memo,
    });
    const at = this.deps.now();
    const check = lastCheckOf(result.event, at);
    if (check) draft.checked(check);
    this.learn(memoOf(result, draft.rev, memo, at), result.event);
    return result.event;
  }

  /**
   * An apply or a removal: the spec guarded, the record written first (unless nothing is attempted), then the backend.
   */
  private async change(
    { draft }: Loaded,
    effect: 'apply' | 'remove',
    snapshot: ConsumerSnapshot,
  ): Promise<ConsumerEvent> {
    const { provider, deps } = this;
    // the policy, checked where rights are applied: on the spec about to be applied or removed
    const verdict = guardSpec(provider, this.job.key, draft.desired, effect);
    if (verdict.kind === 'refused') {
      if (effect === 'apply') return { type: 'APPLY_REFUSED', error: verdict.refusal };
      this.leftBehind = verdict.refusal; // not this consumer's to remove: the backend is not asked
      return { type: 'REMOVED' };
    }
    const input: EffectInput = {
      key: this.job.key,
      provider,
      spec: { ...draft.desired, values: verdict.values },
      context: snapshot.context,
    };
    const horizon = () => new Date(deps.now().getTime() + lockMsOf(provider));
    if (effect === 'remove') {
      await draft.save(snapshot, horizon());
      return deps.effects.remove(input);
    }
    const secret = await deps.effects.secretFor(draft.desired, provider);
    if (secret.kind === 'unusable') return secret.event; // nothing attempted: nothing to write down before it
    // an observe-only provider's apply only asks: nothing to write down before it either
    if (provider.config.management !== 'observe') await draft.save(snapshot, horizon());
    const event = await deps.effects.apply({ ...input, password: secret.password });
    if (event.type === 'APPLIED') draft.applied(deps.now());
    return event;
  }

  /** The machine rests: the record deleted (removed) or written, and what the job's outcome is. */
  private async rest(at: Loaded, snapshot: ConsumerSnapshot): Promise<JobOutcome> {
    const { job, deps } = this;
    const { draft } = at;
    if (snapshot.status === 'done') return this.removed(draft);
    await draft.save(snapshot, null);
    if (draft.wrote) {
      await draft.finish();
      return { kind: 'done' };
    }
    // nothing durable changed: the revision is what the queue's Redis should know, and a wait's
    // own job carries on (its id is taken while it runs, so it cannot be added anew)
    if (this.lock.claim.rev !== draft.rev) await deps.coordination.locks.rememberRevision(job.key, draft.rev);
    const next = draft.pendingWait;
    return job.kind === 'timer' && at.record.rev === job.rev && next
      ? again(next.dueAt, draft.ticket())
      : { kind: 'done' };
  }

  private async removed(draft: RecordDraft): Promise<JobOutcome> {
    await draft.delete();
    const { management, name } = this.provider.config;
    const { state } = draft;
    const login = draft.desired.login;
    const moved = { from: state, to: 'removed' };
    if (this.leftBehind !== undefined)
      this.log.warn(
        moved,
        `${state} → removed: login ${login} left on ${name}, not removed: ${this.leftBehind}; record deleted`,
      );
    else if (management === 'manage')
      this.log.info(moved, `${state} → removed: login ${login} is gone from ${name}; record deleted`);
    else
      this.log.info(
        moved,
        `${state} → removed: no longer managed; login ${login} left on ${name} (management: ${management}); record deleted`,
      );
    return { kind: 'done' };
  }

  private learn(memo: CheckMemo | undefined, event: ConsumerEvent): void {
    this.learnt.memo = memo ?? this.learnt.memo;
    this.learnt.asked = askedOf(event) ?? this.learnt.asked;
    const found = foundOf(event);
    // found not held, then held after the run's apply: healed
    if (found) this.learnt.found = found === 'held' && this.learnt.found === 'lost' ? 'healed' : found;
  }
}

/** A newly declared consumer's record, not stored yet. */
function newRecord(job: JobOf<'desired'>, provider: ProviderRuntime, desired: DesiredSpec, now: Date): ConsumerRecord {
  const snapshot = firstSnapshot(provider.machine, job.key);
  return {
    _id: job.key,
    provider: provider.config.name,
    consumerId: consumerIdOf(job.key),
    desired,
    desiredAt: job.at,
    machine: persist(snapshot),
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
