/**
 * A consumer's run: one job's work on one consumer, under the consumer's lock, as one loop. Every
 * event the consumer meets (a wait's end, a check's result, an apply's, a desired spec, a command,
 * a redo, a heal's confirmation) steps the chart; every effect a step asks for is performed and its
 * result is the next event; as the machine rests the run hands one outcome (`consumer-outcome.ts`)
 * to the persistence edge (`consumer-edge.ts`), which alone writes, notes and schedules.
 *
 * Where the loop starts:
 *
 * - **on the ticket**, for a wait whose ticket is current (its revision is the one the lock's claim
 *   tells) and trusted: the record is not read unless something durable would change. A check that
 *   changes nothing rests as `unchanged`; a served consumer found not held whose heal restores what
 *   the ticket says was applied (its provider manages its logins, its brake not engaged, the same
 *   spec and grant secret) is applied again there and confirmed, and rests as `healed` (the chart's
 *   own steps say `held → lost → held`). Anything else reads the record and carries on against it
 *   from the step reached, when the record still holds what the ticket holds ({@link TicketNotes}
 *   hands it what the steps noted), so that no event is stepped twice; else it starts over from the
 *   record. Nothing on the ticket asks the record store, so a backend that forgot is healed while
 *   the store does not answer;
 * - **on the record**, for every other job: the record is read (or a newly declared consumer's is
 *   made) and the job's kind says what the machine is told ({@link ConsumerRun.eventsFor}), `REDO`
 *   first for a record left mid-effect.
 *
 * Before any apply or removal the spec acted on is checked against its provider's configuration
 * (`spec-guard.ts`): a spec it refuses is an `APPLY_REFUSED`, a removal it refuses leaves the
 * login alone. Before any effect but a check, the record is written with the effect's horizon.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { EFFECT_STATES, type EffectType } from '../machines/consumer-machine.js';
import { verifyDelay } from '../machines/delays.js';
import { desiredEvent, keepsAccepted } from '../machines/desired-event.js';
import {
  persist,
  restore,
  samePersisted,
  step,
  waitEnded,
  type ConsumerSnapshot,
  type PersistedConsumer,
  type Step,
} from '../machines/machine-step.js';
import { keepStep, keptAsStep, keptStep, restingAt, type KeptStep, type PersistedStep } from '../machines/step-memo.js';
import { HoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { Claim, ConsumerLocks, TimelineNotes } from '../src/queue/coordination.js';
import type { ConsumerJobData } from '../src/schedule/consumer-queue.js';
import { isUnreadable, type ConsumerRecord, type LastCheck } from '../src/store/consumer-record.js';
import type { ConsumerStore } from '../src/store/consumer-store.js';
import { jobCause, type TransitionCause } from '../src/store/transition-cause.js';
import { lastCheckOf, memoOf } from './check-memo.js';
import { ConsumerEdge, type EdgeDeps } from './consumer-edge.js';
import { learn, type Learned, type RunOutcome } from './consumer-outcome.js';
import type { CheckResult, EffectInput, Effects, EffectSpec } from './effects.js';
import { againNowIfSuspect, retryLater, type JobOutcome } from './job-outcome.js';
import { lockToken } from './lock-token.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { newRecord, RecordDraft } from './record-draft.js';
import { RunTrail } from './run-trail.js';
import { guardSpec } from './spec-guard.js';
import { healOf, healsQuietly, type TicketHeal } from './ticket-heal.js';
import { TicketNotes, type StepNotes } from './step-notes.js';
import { foundAnswer, restsUnchanged, ticketStart } from './ticket-start.js';
import type { WaitJob } from './wait-job.js';

/** Time added to an effect's deadline for the lock (and the record's effect horizon) that covers it. */
export const LOCK_MARGIN_MS = 10_000;

/**
 * A lock claimed or extended this recently is not extended again before an effect: it still
 * covers the effect's deadline with all but this much of {@link LOCK_MARGIN_MS} to spare, and only
 * the queue's Redis losing it could end it sooner, which an extend just before cannot rule out
 * either. A heal found by a routine check saves two round trips this way.
 */
export const FRESH_LOCK_MS = 1_000;

/** How late a routine check began, from what its lock's claim told of the last check (in process). */
export function tellLateness(
  job: WaitJob,
  { memo }: Claim,
  provider: ProviderRuntime,
  deps: Pick<RunDeps, 'now' | 'observer'>,
): void {
  if (memo && job.wait === 'verify')
    deps.observer?.lateness?.(
      provider.config.name,
      deps.now().getTime() - memo.at - verifyDelay(job.key, provider.config.timing),
    );
}

/** How long the lock on a consumer (and the record's horizon for an effect begun) lasts. */
export function lockMsOf(provider: ProviderRuntime): number {
  return provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS;
}

export interface RunDeps extends EdgeDeps {
  store: EdgeDeps['store'] & Pick<ConsumerStore, 'get'>;
  coordination: EdgeDeps['coordination'] & { readonly locks: ConsumerLocks; readonly notes: TimelineNotes };
  effects: Effects;
  logger: Logger;
  /** Whether the record store is known not to answer (see `src/store/store-watch.ts`). */
  storeDown?: () => boolean;
  observer?: EdgeDeps['observer'] & Partial<Pick<WorkObserver, 'lateness'>>;
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

/**
 * A lock a round took for the run already (`round-checks.ts`, with the other claims of the round), and the routine
 * check it performed under it on the ticket, when it did: the run starts there, and asks nothing twice.
 */
export interface Claimed {
  claim: Claim;
  token: string;
  /** When the lock was claimed (ms since the epoch, this process's clock), taken before asking. */
  asked: number;
  /** The check the round performed on the ticket, the run's first (its lateness told by the round already). */
  checked?: CheckResult;
  /**
   * A heal the round began for it (`round-heals.ts`) and handed over: the apply's result (at `appliedAt`), and its
   * confirmation when it was asked; the run takes them as the results of its own heal's effects, not performed again.
   */
  applied?: ConsumerEvent;
  appliedAt?: Date;
  confirmation?: CheckResult;
  /** What the check's finding says was said already (as the round's applies began): not said again. */
  said?: boolean;
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

/** A wait's run on its ticket, before (or without) the record. */
interface OnTicket {
  job: WaitJob;
  /** The consumer as the ticket holds it (the record at the job's revision). */
  from: PersistedConsumer;
  notes: TicketNotes;
  trail: RunTrail;
  /** The check performed on the ticket, and what the record keeps of it. */
  check?: { result: CheckResult; last: LastCheck | undefined };
  /** A heal applied on the ticket, to confirm (its password never kept beyond the run). */
  heal?: TicketHeal;
}

/** The step a run on the ticket reached when it needed the record: carried on against it. */
interface Carried {
  kind: 'carried';
  last: Step;
}

/** What the machine is told on the record: events, or the steps taken on the ticket to carry on from. */
type Start = { kind: 'events'; events: ConsumerEvent[] } | Carried;

type JobOf<K extends ConsumerJobData['kind']> = Extract<ConsumerJobData, { kind: K }>;
type StartFor<K extends ConsumerJobData['kind']> = (
  job: JobOf<K>,
  at: Loaded,
) => Promise<Start | RunOutcome> | Start | RunOutcome;

const REDO: ConsumerEvent = { type: 'REDO' };
/** What a heal's confirmation is to the chart: a check asked at once. */
const CONFIRM: ConsumerEvent = { type: 'CHECK_NOW' };

export class ConsumerRun {
  private readonly learned: Learned = {};
  /** The consumer's logger, made when first needed (a routine check says nothing). */
  private logger: Logger | undefined;
  /** Where each step is noted: the ticket's notes until the record is read, then the record's draft. */
  private notes: StepNotes | undefined;
  /** The run on the wait's ticket, if it began there. */
  private ticket: OnTicket | undefined;
  /** The step the run on the ticket reached when it needed the record. */
  private carried: Carried | undefined;
  /** The record, once read. */
  private loaded: Loaded | undefined;
  /** Why a removal left the login on the backend, if it did. */
  private leftBehind: string | undefined;
  /** The check a round performed on the ticket before handing the run over: the run's first check, not asked again. */
  private checked: CheckResult | undefined;
  /** The heal's effects a round performed before handing the run over (`round-heals.ts`): taken once each. */
  private healBegun: Pick<Claimed, 'applied' | 'appliedAt' | 'confirmation' | 'said'> | undefined;

  private constructor(
    private readonly job: ConsumerJobData,
    /** Whether the job's ticket may be used (see `job-trust.ts`). */
    private readonly ticketTrusted: boolean,
    private readonly provider: ProviderRuntime,
    private readonly deps: RunDeps,
    private readonly lock: Lock,
    private readonly edge: ConsumerEdge,
  ) {}

  private get log(): Logger {
    this.logger ??= this.deps.logger.child({ consumer: this.job.key });
    return this.logger;
  }

  /**
   * Takes the consumer's lock (busy: later), runs the job under it, hands its outcome to the edge,
   * and releases the lock with what the run's checks learned, whether the run ends or throws. `claimed`: the lock
   * (and the check) a round took for it already.
   */
  static async underLock(
    job: ConsumerJobData,
    ticketTrusted: boolean,
    provider: ProviderRuntime,
    deps: RunDeps,
    claimed?: Claimed,
  ): Promise<JobOutcome> {
    const lockMs = lockMsOf(provider);
    const token = claimed?.token ?? lockToken();
    const asked = claimed?.asked ?? deps.now().getTime();
    const claim = claimed ? claimed.claim : await deps.coordination.locks.claim(job.key, token, lockMs);
    if (!claim) return retryLater('busy', deps.now());
    const edge = new ConsumerEdge(deps);
    const extend = () => deps.coordination.locks.extend(job.key, token, lockMs);
    const run = new ConsumerRun(job, ticketTrusted, provider, deps, { claim, extend, heldSince: asked }, edge);
    run.checked = claimed?.checked;
    if (claimed?.applied) run.healBegun = claimed;
    let outcome: JobOutcome;
    try {
      outcome = await edge.settle(await run.run());
    } catch (error) {
      await edge.release(job.key, provider, token, run.learned, asked);
      throw error;
    }
    const suspect = await edge.release(job.key, provider, token, run.learned, asked);
    outcome = againNowIfSuspect(outcome, suspect, deps.now());
    return run.learned.found ? { ...outcome, found: run.learned.found } : outcome;
  }

  /** The loop, on the ticket while it can be, else (or then) on the record; its outcome as the machine rests. */
  private async run(): Promise<RunOutcome> {
    const { job, lock } = this;
    if (job.kind === 'wait' && lock.claim.rev !== null && lock.claim.rev > job.rev)
      return this.stopped({ kind: 'stale' });
    if (job.kind === 'wait') {
      const reached = await this.onTheTicket(job);
      if (reached && reached.kind !== 'carried') return reached;
      this.carried = reached;
    }
    if (this.deps.storeDown?.()) return this.stopped(this.storeDown());
    const at = await this.load();
    if (at.kind !== 'loaded') return at;
    this.loaded = at;
    this.notes = at.draft;
    const start = await (this.eventsFor[job.kind] as StartFor<typeof job.kind>)(job, at);
    if (start.kind !== 'events' && start.kind !== 'carried') return start;
    return this.rest(at, await this.drive(at, start));
  }

  /**
   * A wait's run on its ticket, when the ticket is current and trusted: at rest without the record
   * (unchanged, healed), the step reached when the record is needed, or undefined (the ticket cannot be used).
   */
  private async onTheTicket(job: WaitJob): Promise<RunOutcome | Carried | undefined> {
    const { lock, provider } = this;
    if (lock.claim.rev !== job.rev || !this.ticketTrusted) return undefined;
    if (!this.checked) this.lateness(job);
    const start = ticketStart(provider.machine, job);
    if (!start) return undefined;
    const { from, waitEnd, ending } = start;
    const notes = new TicketNotes();
    this.ticket = { job, from, notes, trail: new RunTrail(from.state, this.cause) };
    this.notes = notes;
    // the chart's kept answers (`machines/step-memo.ts`): a routine check that changes nothing needs no step of its own
    const found =
      ending?.effect === 'check' && ending.said.length === 0 ? await this.check(ending.consumer) : undefined;
    const answer = found && foundAnswer(provider.machine, start, found);
    const unchanged = answer && this.unchangedOnTicket(answer);
    if (unchanged) return unchanged;
    // else stepped and noted, each event once (the wait's end; the check's result when it was asked): a heal's steps
    // from the chart's kept answers too, XState's snapshot restored only when the run is carried on against the record
    const ended = this.move(restingAt(provider.machine, from), waitEnd);
    const stepped = found && this.move(ended, found);
    const last = await this.follow(stepped || ended);
    return last.effect ? { kind: 'carried', last } : this.restOnTicket(last);
  }

  /**
   * A routine check that changed nothing durable, told by the chart's kept answers (`machines/step-memo.ts`) without
   * restoring the machine: `unchanged`, its wait due again; undefined when the check's step must be taken for real.
   */
  private unchangedOnTicket(answer: PersistedStep): RunOutcome | undefined {
    const { job, from, notes } = this.ticket!;
    if (notes.saysAnything || !restsUnchanged(answer, from)) return undefined;
    const at = new Date(this.deps.now().getTime() + answer.wait.ms);
    return { key: job.key, provider: this.provider, kind: 'unchanged', at };
  }

  /** How late a routine check began (in process, from what the lock told). */
  private lateness(job: WaitJob): void {
    tellLateness(job, this.lock.claim, this.provider, this.deps);
  }

  /**
   * The machine rests on the ticket: a check that changed nothing durable (said nothing, asked its wait, the consumer
   * as the ticket holds it) is `unchanged`; a heal is confirmed; anything else is carried on against the record.
   */
  private restOnTicket(last: Step): Promise<RunOutcome | Carried> | RunOutcome | Carried {
    const { job, from, notes, check, heal } = this.ticket!;
    if (heal) return this.confirmed(last, heal);
    if (check && !notes.saysAnything && last.wait && samePersisted(persisted(last), from)) {
      const at = new Date(this.deps.now().getTime() + last.wait.ms);
      return { key: job.key, provider: this.provider, kind: 'unchanged', at };
    }
    return { kind: 'carried', last };
  }

  /**
   * A heal applied on the ticket, confirmed by a check with the password it was given: stepped (a check asked at once,
   * its result) and `healed`, nothing written, when the consumer rests as the ticket holds it. A confirmation that does
   * not find it held is not stepped: the apply is carried on against the record, where the brake counts it (rule 2)
   * and its next check comes after the brake's wait.
   */
  private async confirmed(last: Step, heal: TicketHeal): Promise<RunOutcome | Carried> {
    const { job, from, check, trail, notes } = this.ticket!;
    const found = check!.result.event;
    await this.keepLock('check');
    const asking = { ...heal.input, spec: job.ticket.spec, appliedAt: job.ticket.appliedAt, memo: null };
    const reason = found.type === 'NOT_HELD' ? found.reason : undefined;
    const confirmation =
      this.healBegun?.confirmation ?? (await this.deps.effects.confirm(asking, heal.password, reason));
    this.healBegun = undefined; // taken once
    const at = this.deps.now();
    const memo = memoOf(confirmation, job.rev, this.lock.claim.memo, at);
    if (confirmation.event.type !== 'HELD') {
      this.learned.memo = memo ?? this.learned.memo;
      this.log.debug({ state: from.state }, 'applied again but not confirmed held: carried on against the record');
      return { kind: 'carried', last };
    }
    // the last check's outcome as the status shows it: held, healed from what was found
    const healed = memo && { ...memo, detail: `healed: ${check!.last?.detail ?? 'not held'}; applied again` };
    learn(this.learned, healed, confirmation.event);
    const held = this.move(this.move(last, CONFIRM), confirmation.event);
    if (!held.wait || !restores(persisted(held), from)) return { kind: 'carried', last: held };
    notes.sayNow();
    const again = new Date(at.getTime() + held.wait.ms);
    return {
      key: job.key,
      provider: this.provider,
      kind: 'healed',
      at: again,
      trail: trail.entries,
      found,
      log: this.log,
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
    if (!this.carried) return retryLater('store-down', now);
    return retryLater('store-down', now, {
      until: new Date(now.getTime() + verifyDelay(job.key, provider.config.timing)),
    });
  }

  /** The record (a newly declared consumer's, not stored yet), or why the run stops here. */
  private async load(): Promise<Loaded | RunOutcome> {
    const { job, provider, deps } = this;
    const now = deps.now();
    let record = await deps.store.get(job.key);
    const isNew = record === null;
    if (record === null) {
      if (job.kind !== 'desired') return this.stopped({ kind: 'absent' });
      const made = this.made(job);
      if (made) return made;
      record = newRecord(job.key, provider, job.desired!, job.at, now);
    }
    if (isUnreadable(record))
      throw new HoldfastError('RECORD_UNREADABLE', `the record of ${job.key} cannot be read: ${record.unreadable}`);
    const consumer = record.machine;
    const inEffect = EFFECT_STATES.has(consumer.state);
    if (inEffect && record.effectUntil && record.effectUntil > now)
      return this.stopped(retryLater('busy', now, { until: record.effectUntil }));
    const marked = isNew && this.lock.claim.removedAt !== null;
    // the lock is held: no revision the claim did not find can be written meanwhile
    const draft = new RecordDraft(record, isNew, deps, this.log, marked, !isNew || this.lock.claim.rev !== null);
    draft.causedBy(this.cause);
    return { kind: 'loaded', record, consumer, draft, inEffect };
  }

  /**
   * A desired job that finds no record: a removal marks its time (and ends: nothing to remove);
   * a spec read before the consumer's last removal is dropped, as a spec older than a record's
   * is: jobs for one consumer do not keep their order (a busy one is put back), and a removal
   * deletes the record that would tell. Undefined: the spec makes the record.
   */
  private made(job: JobOf<'desired'>): RunOutcome | undefined {
    if (job.desired === null) return { key: job.key, provider: this.provider, kind: 'marked', at: job.at };
    const { removedAt } = this.lock.claim;
    if (removedAt === null || job.at > removedAt) return undefined;
    this.log.info(
      { specAt: new Date(job.at).toISOString(), removedAt: new Date(removedAt).toISOString() },
      'a spec read before the consumer was removed came late: dropped; the consumer stays removed',
    );
    return this.stopped({ kind: 'stale' });
  }

  /** What each kind of job tells the machine; a record left mid-effect is told `REDO` first. */
  private readonly eventsFor: { [K in ConsumerJobData['kind']]: StartFor<K> } = {
    wait: async (job, at) => {
      if (at.record.rev !== job.rev) {
        // stale, but the record's own wait may be what a dead worker did not schedule
        await this.edge.metStale(at.draft);
        return at.inEffect ? { kind: 'events', events: [REDO] } : this.stopped({ kind: 'stale' });
      }
      const { carried, ticket } = this;
      if (carried && !at.inEffect && samePersisted(ticket!.from, at.consumer)) return carried;
      return { kind: 'events', events: [...(at.inEffect ? [REDO] : []), waitEnded(job.wait, at.consumer.state)] };
    },
    desired: (job, at) => this.delivered(job, at),
    command: (job, at) => ({ kind: 'events', events: [...(at.inEffect ? [REDO] : []), job.event] }),
    redo: (job, at) => {
      if (!at.inEffect)
        return at.record.rev !== job.rev ? this.stopped({ kind: 'stale' }) : { kind: 'events', events: [] };
      return { kind: 'events', events: [REDO] };
    },
  };

  /** A desired spec the sync delivered: the machine's event for it, or kept aside when the policy refuses it. */
  private delivered(job: JobOf<'desired'>, { draft, consumer, inEffect }: Loaded): Start | RunOutcome {
    if (job.at < draft.desiredReadAt) return this.stopped({ kind: 'stale' });
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
    return jobCause(job.kind, job.kind === 'wait' ? job.wait : undefined);
  }

  /** Steps the machine on the record through what it is told, performing each effect it asks for, until it rests. */
  private async drive(at: Loaded, start: Start): Promise<ConsumerSnapshot> {
    if (start.kind === 'carried') return (await this.follow(await this.carryOn(at, start.last))).snapshot;
    let snapshot = restore(this.provider.machine, at.consumer);
    for (const event of start.events) {
      // an effect a dead worker left is performed again first (a recovery), then what the job says
      at.draft.causedBy(event.type === 'REDO' ? 'recovery' : this.cause);
      snapshot = (await this.follow(this.move(snapshot, event))).snapshot;
    }
    return snapshot;
  }

  /** The steps taken on the ticket, handed to the record's draft as if taken on it; the step to carry on from. */
  private async carryOn(at: Loaded, last: Step): Promise<Step> {
    const { check, notes } = this.ticket!;
    // a check performed before the record was read: its result is fed on the same terms as any effect's
    if (check) await this.stillOurs('check');
    notes.replayInto(at.draft);
    return last;
  }

  /**
   * A step on the ticket, returned from the chart's kept answers when it returned it before (else stepped, and kept):
   * a heal steps every consumer of a cache that forgot them through the same transitions. Kept only where it can serve:
   * a finding that says something (in the backend's words, which may name the consumer) is stepped each time, and
   * keeping it would only push out the answers every consumer shares.
   */
  private stepOnTicket(from: PersistedConsumer, event: ConsumerEvent): KeptStep {
    const { machine } = this.provider;
    const kept = keptStep(machine, from, event);
    if (kept !== undefined) return keptAsStep(machine, kept);
    const stepped = step(machine, restore(machine, from), event);
    if (stepped.said.length === 0) keepStep(machine, from, event, stepped);
    return { ...stepped, consumer: persist(stepped.snapshot) };
  }

  /**
   * Performs what each step asks for and steps on its result, until the machine rests, or (on the
   * ticket) a step asks for what needs the record: that step, its effect not performed.
   */
  private async follow(moved: Step): Promise<Step> {
    let last = moved;
    while (last.effect) {
      const result = await this.perform(last.effect, last.snapshot);
      if (result === undefined) return last;
      last = this.move(last, result);
    }
    return last;
  }

  /**
   * One event stepped: noted (the record's draft, or the ticket's notes and trail). On the ticket, from the chart's
   * kept answers (`machines/step-memo.ts`); on the record, stepped.
   */
  private move(from: ConsumerSnapshot | Step, event: ConsumerEvent): Step {
    const notes = this.notes!;
    const onTicket = this.loaded ? undefined : this.ticket;
    if (event.type === 'NOT_HELD' && event.node !== undefined) {
      notes.concerns(event.node);
      onTicket?.trail.concerns(event.node);
    }
    const { machine } = this.provider;
    const moved = onTicket
      ? this.stepOnTicket(persisted(from), event)
      : step(machine, 'snapshot' in from ? from.snapshot : from, event);
    notes.setWait(moved.wait);
    const state = persisted(moved).state;
    for (const said of moved.said) notes.say(() => this.log[said.level]({ state, ...said.fields }, said.message));
    onTicket?.trail.mark(persisted(moved), moved.effect, this.deps);
    return moved;
  }

  /**
   * Performs the effect a step asks for, under the lock and while the store answers; its result. On the ticket: its
   * one check, and an apply only as a heal of what the ticket says was applied; undefined for anything else (the
   * record is read first).
   */
  private async perform(effect: EffectType, snapshot: ConsumerSnapshot): Promise<ConsumerEvent | undefined> {
    const { loaded, ticket } = this;
    if (!loaded) {
      if (effect === 'check' && !ticket!.check) return this.check(snapshot);
      return effect === 'apply' && !ticket!.heal ? this.healOnTicket(snapshot) : undefined;
    }
    await this.stillOurs(effect);
    return effect === 'check' ? this.check(snapshot) : this.change(loaded, effect, snapshot);
  }

  /**
   * An apply the ticket's steps ask for: a heal of what the ticket says was applied (rule 3 of docs/architecture.md: the record is durable), applied there,
   * without the record (the spec guarded as every apply is, the grant secret the check read); its result. Undefined:
   * the record is read, and written before the apply, as every change is.
   */
  private async healOnTicket(lost: ConsumerSnapshot): Promise<ConsumerEvent | undefined> {
    const ticket = this.ticket!;
    const { job, from, check } = ticket;
    if (!healsQuietly(this.provider, job, from, check?.result)) return undefined;
    const heal = await healOf(this.provider, this.deps.effects, job, check?.result, lost);
    if (typeof heal === 'string') {
      this.log.debug({ state: ticket.from.state }, `not healed without the record: ${heal}; carried on against it`);
      return undefined;
    }
    const begun = this.healBegun;
    // what the loss says, said as the heal begins (by the round that began it, when it did)
    if (begun?.said) ticket.notes.saidAlready();
    else ticket.notes.sayNow();
    await this.keepLock('apply');
    const applied =
      begun?.applied ??
      (await this.deps.effects.apply({ ...heal.input, password: heal.password, secretMac: heal.secretMac }));
    this.healBegun = begun?.confirmation ? { confirmation: begun.confirmation } : undefined; // the apply: taken once
    if (applied.type !== 'APPLIED') return applied; // carried on against the record: retried on its own backoff
    ticket.notes.applied(begun?.appliedAt ?? this.deps.now());
    ticket.heal = heal;
    return applied;
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

  /** What an effect works on: the ticket's spec and revision until the record is read, then the record's. */
  private get basis(): { spec: EffectSpec; appliedAt: number | null; rev: number } {
    const { loaded, ticket } = this;
    if (loaded) return { spec: loaded.draft.desired, appliedAt: loaded.draft.appliedAtMs, rev: loaded.draft.rev };
    const { job } = ticket!;
    return { spec: job.ticket.spec, appliedAt: job.ticket.appliedAt, rev: job.rev };
  }

  private async check(snapshot: Pick<ConsumerSnapshot, 'context'>): Promise<ConsumerEvent> {
    const { memo } = this.lock.claim;
    const { spec, appliedAt, rev } = this.basis;
    const { key } = this.job;
    const { checked } = this;
    this.checked = undefined; // the round's check is the run's first, and only that one
    const result =
      checked ??
      (await this.deps.effects.check({
        key,
        provider: this.provider,
        spec,
        context: snapshot.context,
        appliedAt,
        memo,
      }));
    const at = this.deps.now();
    const last = lastCheckOf(result.event, at);
    if (last) this.notes!.checked(last);
    if (!this.loaded) this.ticket!.check = { result, last };
    learn(this.learned, memoOf(result, rev, memo, at), result.event);
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
      await this.edge.ahead(draft, snapshot, horizon());
      return deps.effects.remove(input);
    }
    const secret = await deps.effects.secretFor(draft.desired, provider);
    if (secret.kind === 'unusable') return secret.event; // nothing attempted: nothing to write down before it
    // an observe-only provider's apply only asks: nothing to write down before it either
    if (provider.config.management !== 'observe') await this.edge.ahead(draft, snapshot, horizon());
    const event = await deps.effects.apply({ ...input, password: secret.password });
    if (event.type === 'APPLIED') draft.applied(deps.now());
    return event;
  }

  /** The machine rests on the record: removed, or at rest; the outcome the edge persists. */
  private rest(at: Loaded, snapshot: ConsumerSnapshot): RunOutcome {
    const { job, provider, lock } = this;
    const { draft } = at;
    if (snapshot.status === 'done')
      return { key: job.key, provider, kind: 'removed', draft, leftBehind: this.leftBehind, log: this.log };
    const sameWait = job.kind === 'wait' && at.record.rev === job.rev;
    return { key: job.key, provider, kind: 'rested', draft, snapshot, claimedRev: lock.claim.rev, sameWait };
  }

  /** The run stops with `outcome`, nothing to persist. */
  private stopped(outcome: JobOutcome): RunOutcome {
    return { key: this.job.key, provider: this.provider, kind: 'stopped', job: outcome };
  }
}

/** Whether a heal's rest is the consumer the ticket holds, but for the words of its reason: nothing durable changed. */
function restores(rest: PersistedConsumer, from: PersistedConsumer): boolean {
  return samePersisted({ state: rest.state, context: { ...rest.context, reason: from.context.reason } }, from);
}

/** A step's (or a snapshot's) consumer as persisted, without restoring a kept step's snapshot. */
function persisted(at: ConsumerSnapshot | Step | KeptStep): PersistedConsumer {
  if ('consumer' in at) return at.consumer;
  return persist('snapshot' in at ? at.snapshot : at);
}
