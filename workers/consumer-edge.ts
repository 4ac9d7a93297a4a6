/**
 * The persistence edge: the one place a consumer's run is written down. The run (`consumer-run.ts`)
 * decides nothing of storage; it hands the edge one outcome as the machine rests
 * (`consumer-outcome.ts`), and the edge says, by its kind:
 *
 * - what is written: the record (`record-draft.ts`, compare-and-swap on its revision), only when
 *   something durable changed; a removed consumer's record deleted;
 * - what is only noted: the brief and the timeline in the queue's Redis, the metrics, the log
 *   (and, at the lock's release, the check memo);
 * - the next wait: handed to the scheduler (the due set) at the new revision, or the same wait
 *   again when nothing was written.
 *
 * Two writes come before rest, and go through here too: the record written ahead of an effect that
 * changes the backend (rule 3 of docs/architecture.md, the record is durable: a worker killed mid-effect leaves a record that says so), and
 * a stale job making sure of the record's own wait.
 */
import type { ConsumerSnapshot } from '../machines/machine-step.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { ConsumerLocks, RecordNotes, TimelineNotes } from '../src/queue/coordination.js';
import type { WaitScheduler } from '../src/schedule/due-waits.js';
import { timelineEventsOf } from '../src/queue/timeline-event.js';
import type { Learned, RunOutcome } from './consumer-outcome.js';
import { noteHeal, type HealNoteDeps } from './heal-noted.js';
import { again, type JobOutcome } from './job-outcome.js';
import type { ProviderRuntime } from './provider-runtime.js';
import type { DraftDeps, RecordDraft, Wrote } from './record-draft.js';

export interface EdgeDeps extends DraftDeps {
  /** Where the wait the machine asks for is scheduled (the due set). */
  waits: WaitScheduler;
  coordination: RecordNotes & { readonly locks: ConsumerLocks; readonly notes: TimelineNotes };
  /** Told of every state change (the metrics); in process. */
  observer?: Pick<WorkObserver, 'transition'>;
  /** Told when a heal's finding shows a loss wave (`heal-noted.ts`). */
  onLossWave?: HealNoteDeps['onLossWave'];
}

type Of<K extends RunOutcome['kind']> = Extract<RunOutcome, { kind: K }>;

export class ConsumerEdge {
  /** A heal's note, sent as the run settled, awaited with the lock's release (sent in the same turn: one round trip). */
  private noting: Promise<void> | undefined;

  constructor(private readonly deps: EdgeDeps) {}

  /** The run at rest: its outcome written, noted and scheduled; what becomes of its job. */
  async settle(outcome: RunOutcome): Promise<JobOutcome> {
    switch (outcome.kind) {
      case 'unchanged':
        return again(outcome.at);
      case 'healed':
        this.noting = noteHeal(outcome, this.deps);
        return again(outcome.at);
      case 'rested':
        return this.rested(outcome);
      case 'removed':
        return this.removed(outcome);
      case 'marked':
        await this.deps.coordination.locks.markRemoved(outcome.key, outcome.at);
        return { kind: 'absent' };
      case 'stopped':
        return outcome.job;
    }
  }

  /** Before an effect that changes the backend: the record written with the effect's horizon, `until`. */
  async ahead(draft: RecordDraft, snapshot: ConsumerSnapshot, until: Date): Promise<void> {
    await this.noted(draft, await draft.save(snapshot, until));
  }

  /**
   * A stale job met the record: the record's own wait made sure of (a worker that died between
   * writing the record and scheduling its wait left none), and its revision remembered.
   */
  async metStale(draft: RecordDraft): Promise<void> {
    await this.schedule(draft);
    await this.deps.coordination.locks.rememberRevision(draft.key, draft.rev);
  }

  /**
   * The lock released with what the run's checks learned (the check memo, noted) and when the run began asking
   * (`askedAt`, ms); a heal's note awaited with it (sent first, on the same connection: the queue's Redis runs it before
   * the release). True when the consumer is still suspect (its run asked before its provider's last node event): its
   * wait is due again at once.
   */
  async release(
    key: string,
    provider: ProviderRuntime,
    token: string,
    learned: Learned,
    askedAt: number,
  ): Promise<boolean> {
    const { memo, asked } = learned;
    const releasing = this.deps.coordination.locks.release(key, provider.config.name, token, memo, asked, askedAt);
    const [{ askedAbout, suspect }] = await Promise.all([releasing, this.noting]);
    if (askedAbout !== undefined) provider.fleet.consumers = askedAbout; // the pace of its deep checks
    return suspect;
  }

  private async rested({ draft, snapshot, claimedRev, sameWait }: Of<'rested'>): Promise<JobOutcome> {
    await this.noted(draft, await draft.save(snapshot, null));
    if (draft.wrote) {
      await this.metStale(draft); // the wait at the new revision, then the revision remembered
      return { kind: 'done' };
    }
    // nothing durable changed: the revision is what the queue's Redis should know, and a wait's
    // own job carries on (its id is taken while it runs, so it cannot be added anew)
    if (claimedRev !== draft.rev) await this.deps.coordination.locks.rememberRevision(draft.key, draft.rev);
    const next = draft.pendingWait;
    return sameWait && next ? again(next.dueAt, draft.ticket()) : { kind: 'done' };
  }

  /** A write made: its brief and its transition's timeline events noted (one round trip), the metrics told. */
  private async noted(draft: RecordDraft, wrote: Wrote | undefined): Promise<void> {
    if (!wrote) return;
    const { brief, transition, history } = wrote;
    // the transition's losses, heals and brakes go to the provider's timeline with the brief
    await this.deps.coordination.notes.noteBriefs([
      [draft.key, brief, transition ? timelineEventsOf(draft.key, transition, history) : []],
    ]);
    if (transition) this.deps.observer?.transition(draft.provider, transition, history);
  }

  private async schedule(draft: RecordDraft): Promise<void> {
    const wait = draft.writtenWait;
    if (wait) await this.deps.waits.scheduleWaits([{ key: draft.key, timer: wait, ticket: draft.ticket() }]);
  }

  private async removed({ draft, provider, log, leftBehind }: Of<'removed'>): Promise<JobOutcome> {
    await draft.delete();
    const { management, name } = provider.config;
    const { state } = draft;
    const login = draft.desired.login;
    const moved = { from: state, to: 'removed' };
    if (leftBehind !== undefined)
      log.warn(moved, `${state} → removed: login ${login} left on ${name}, not removed: ${leftBehind}; record deleted`);
    else if (management === 'manage')
      log.info(moved, `${state} → removed: login ${login} is gone from ${name}; record deleted`);
    else
      log.info(
        moved,
        `${state} → removed: no longer managed; login ${login} left on ${name} (management: ${management}); record deleted`,
      );
    return { kind: 'done' };
  }
}
