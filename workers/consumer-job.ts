/**
 * One job, one consumer. The worker takes the consumer's lock, which tells it what the queue's
 * Redis knows: the record's revision and what its checks learned. Then either
 *
 * - a **routine check** (a wait whose ticket is current, see `routine-check.ts`) runs on what
 *   the job carries and, when nothing durable changed, runs the same job again later; or
 * - the job **loads** the record, **transitions** the machine one event at a time, **persists**
 *   what changed (before any effect but a check), **performs** the effect the machine asks
 *   for and **feeds back** its result, until the machine rests; then the wait it asks for
 *   becomes a job carrying the new revision.
 *
 * A job holdfast did not write is dropped first, or its ticket not used (`job-trust.ts`); and
 * before any apply or removal, the spec acted on is checked against its provider's
 * configuration (`spec-guard.ts`): a spec it refuses is an `APPLY_REFUSED`, a removal it refuses
 * leaves the login alone.
 */
import { randomUUID } from 'node:crypto';
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { EFFECT_STATES, type EffectType } from '../machines/consumer-machine.js';
import { desiredEvent, keepsAccepted } from '../machines/desired-event.js';
import { firstSnapshot, persist, restore, step, waitEnded, type ConsumerSnapshot } from '../machines/machine-step.js';
import { HoldfastError } from '../src/errors/holdfast-error.js';
import type { Logger } from '../src/logging/logger.js';
import type { Asked, CheckMemo, Claim, ConsumerLocks } from '../src/queue/coordination.js';
import type { ConsumerJobData } from '../src/queue/consumer-queue.js';
import { isUnreadable, type ConsumerRecord, type DesiredSpec } from '../src/store/consumer-record.js';
import type { ConsumerStore } from '../src/store/consumer-store.js';
import type { Effects } from './effects.js';
import { verifyDelay } from '../machines/delays.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { RecordDraft, type DraftDeps } from './record-draft.js';
import type { JobTrust } from './job-trust.js';
import { guardSpec } from './spec-guard.js';
import { lastCheckOf, memoOf, routineCheck, type PerformedCheck } from './routine-check.js';

/** Time added to an effect's deadline for the lock (and the record's effect horizon) that covers it. */
export const LOCK_MARGIN_MS = 10_000;

export interface JobDeps extends DraftDeps {
  store: DraftDeps['store'] & Pick<ConsumerStore, 'get'>;
  coordination: DraftDeps['coordination'] & ConsumerLocks;
  providers: ReadonlyMap<string, ProviderRuntime>;
  effects: Effects;
  /** Judges what a job may be taken at its word for (see `job-trust.ts`). */
  trust: JobTrust;
  logger: Logger;
  /** Whether the record store is known not to answer: then no consumer is acted on (see `src/store/store-watch.ts`). */
  storeDown?: () => boolean;
  observer?: DraftDeps['observer'] & Partial<Pick<WorkObserver, 'lateness'>>;
}

/** How long a job waits, put back, while the record store does not answer. */
export const STORE_DOWN_RETRY_MS = 1000;

export type JobOutcome =
  | { kind: 'done' }
  /** A routine check found nothing durable changed: run this same job again at `at`. */
  | { kind: 'again'; at: Date }
  /** Another worker acts on the consumer (or did, and its effect's deadline is not over): try again at `at`. */
  | { kind: 'busy'; at: Date }
  | { kind: 'stale' | 'absent' | 'unknown-provider' }
  /** Not written by holdfast: dropped (see `job-trust.ts`). */
  | { kind: 'rejected' };

const BUSY_RETRY_MS = 250;

function busy(now: Date, until?: Date | null): JobOutcome {
  const at = until && until > now ? until.getTime() : now.getTime() + BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS);
  return { kind: 'busy', at: new Date(at) };
}

function askedOf(event: ConsumerEvent): Asked {
  if (event.type === 'CHECK_FAILED') return 'could-not-ask';
  return event.type === 'HELD' || event.type === 'NOT_HELD' ? 'asked' : undefined;
}

export async function runConsumerJob(job: ConsumerJobData, deps: JobDeps): Promise<JobOutcome> {
  const trust = deps.trust.judge(job);
  if (trust === 'none') return { kind: 'rejected' };
  const providerName = job.key.slice(0, job.key.indexOf('/'));
  const provider = deps.providers.get(providerName);
  if (!provider) {
    deps.logger.warn({ consumer: job.key }, `no provider "${providerName}" in this configuration; job skipped`);
    return { kind: 'unknown-provider' };
  }
  // nothing is done from a record that may be stale, and no backend is asked meanwhile
  if (deps.storeDown?.()) return { kind: 'busy', at: new Date(deps.now().getTime() + STORE_DOWN_RETRY_MS + Math.floor(Math.random() * STORE_DOWN_RETRY_MS)) };
  const lockMs = provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS;
  const token = randomUUID();
  const claim = await deps.coordination.claim(job.key, token, lockMs);
  if (!claim) return busy(deps.now());
  const learned: { memo?: CheckMemo | undefined; asked?: Asked } = {};
  try {
    if (job.kind === 'timer' && claim.rev !== null && claim.rev > job.epoch) return { kind: 'stale' };
    let performed: PerformedCheck | undefined;
    if (job.kind === 'timer' && claim.rev === job.epoch && trust === 'whole') {
      // a routine check is due one wait after the last: how late it began (in process, from what the lock told)
      if (claim.memo && job.wait === 'verify') deps.observer?.lateness?.(providerName, deps.now().getTime() - claim.memo.at - verifyDelay(job.key, provider.config.timing));
      const routine = await routineCheck(job, provider, claim.memo, deps.effects, deps.now);
      if (!('notRoutine' in routine)) {
        learned.memo = routine.memo;
        if ('again' in routine) {
          learned.asked = askedOf(routine.event);
          return { kind: 'again', at: routine.again };
        }
        learned.asked = askedOf(routine.performed.event);
        performed = routine.performed;
      }
    }
    const extend = () => deps.coordination.extend(job.key, token, lockMs);
    return await act(job, provider, deps, { extend, claim, learned, ...(performed ? { performed } : {}) });
  } finally {
    await deps.coordination.release(job.key, provider.config.name, token, learned.memo, learned.asked);
  }
}

interface ActOptions {
  extend: () => Promise<boolean>;
  /** What the queue's Redis knew of the consumer as the job took its lock. */
  claim: Claim;
  /** What this job's checks learn, for the lock's release. */
  learned: { memo?: CheckMemo | undefined; asked?: Asked };
  /** A check a routine check already performed on the record's current revision. */
  performed?: PerformedCheck;
}

/** A newly declared consumer's record, not stored yet. */
function newRecord(job: Extract<ConsumerJobData, { kind: 'desired' }>, provider: ProviderRuntime, desired: DesiredSpec, now: Date): ConsumerRecord {
  const snapshot = firstSnapshot(provider.machine, job.key);
  return {
    _id: job.key,
    provider: provider.config.name,
    consumerId: job.key.slice(job.key.indexOf('/') + 1),
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

/** Loads the record and drives the machine against it until it rests. */
async function act(job: ConsumerJobData, provider: ProviderRuntime, deps: JobDeps, options: ActOptions): Promise<JobOutcome> {
  const now = deps.now();
  let record = await deps.store.get(job.key);
  const isNew = record === null;
  if (record === null) {
    if (job.kind !== 'desired' || job.desired === null) return { kind: 'absent' };
    record = newRecord(job, provider, job.desired, now);
  }
  if (isUnreadable(record)) throw new HoldfastError('RECORD_UNREADABLE', `the record of ${job.key} cannot be read: ${record.unreadable}`);
  const consumer = record.machine;
  const inEffect = EFFECT_STATES.has(consumer.state);
  if (inEffect && record.effectUntil && record.effectUntil > now) return busy(now, record.effectUntil);

  const log = deps.logger.child({ consumer: job.key });
  const draft = new RecordDraft(record, isNew, deps, log);
  const events: ConsumerEvent[] = [];
  // a record left mid-effect by a worker that died: perform its effect again first
  if (inEffect) events.push({ type: 'REDO' });
  switch (job.kind) {
    case 'timer':
      if (record.rev !== job.epoch) {
        // stale, but the record's own wait may be what a dead worker did not schedule
        await draft.reschedule();
        if (events.length === 0) return { kind: 'stale' };
      } else events.push(waitEnded(job.wait, consumer.state));
      break;
    case 'desired': {
      if (job.at < draft.desiredReadAt) return { kind: 'stale' };
      const desired = job.desired ?? { ...draft.desired, removed: true };
      if (keepsAccepted(desired, consumer) && !draft.desired.removed) {
        draft.refuse(desired, job.at);
        const kept = draft.desired.source;
        draft.say(() => log.error({ state: consumer.state }, `new spec refused by its provider's policy: ${desired.problems.join('; ')}; the spec accepted at ${kept} stays applied and checked`));
        break;
      }
      draft.deliver(desired, job.at);
      const event = desiredEvent(desired, consumer.state);
      if (event) events.push(event);
      break;
    }
    case 'command':
      events.push(job.event);
      break;
    case 'redo':
      if (record.rev !== job.rev && events.length === 0) return { kind: 'stale' };
      break;
  }

  let snapshot: ConsumerSnapshot = restore(provider.machine, consumer);
  let performed = options.performed;
  /** Why a removal left the login on the backend, if it did. */
  let leftBehind: string | undefined;
  /** Performs the effect the machine asks for (persisting first, but for a check) and returns its result. */
  const perform = async (effect: EffectType): Promise<ConsumerEvent> => {
    if (!(await options.extend())) throw new HoldfastError('REVISION_CONFLICT', `lost the lock on ${job.key} before ${effect}`);
    if (deps.storeDown?.()) throw new HoldfastError('STORE_UNAVAILABLE', `the record store stopped answering before the ${effect} of ${job.key}; put back until it answers`);
    const input = { key: job.key, provider, spec: draft.desired, context: snapshot.context };
    if (effect !== 'check') {
      // the policy, checked where rights are applied: on the spec about to be applied or removed
      const verdict = guardSpec(provider, job.key, draft.desired, effect);
      if ('refusal' in verdict) {
        if (effect === 'apply') return { type: 'APPLY_REFUSED', error: verdict.refusal };
        leftBehind = verdict.refusal; // not this consumer's to remove: the backend is not asked
        return { type: 'REMOVED' };
      }
      input.spec = { ...draft.desired, values: verdict.values };
      const problem = effect === 'apply' ? await deps.effects.secretProblem(draft.desired, provider) : null;
      if (problem) return problem; // nothing attempted: nothing to write down before it
      // an observe-only provider's apply only asks: nothing to write down before it either
      if (!(effect === 'apply' && provider.config.management === 'observe')) {
        await draft.save(snapshot, new Date(deps.now().getTime() + provider.config.timing.checkTimeoutMs + LOCK_MARGIN_MS));
      }
      const event = await deps.effects[effect](input);
      if (event.type === 'APPLIED') draft.applied(deps.now());
      return event;
    }
    if (performed) {
      const { event, lastCheck } = performed;
      performed = undefined;
      if (lastCheck) draft.checked(lastCheck);
      return event;
    }
    const memo = options.claim.memo;
    const result = await deps.effects.check({ ...input, appliedAt: draft.appliedAtMs, memo });
    const at = deps.now();
    const check = lastCheckOf(result.event, at);
    if (check) draft.checked(check);
    options.learned.memo = memoOf(result, draft.revision, memo, at) ?? options.learned.memo;
    options.learned.asked = askedOf(result.event) ?? options.learned.asked;
    return result.event;
  };

  for (const first of events) {
    let event: ConsumerEvent | undefined = first;
    while (event) {
      const moved = step(provider.machine, snapshot, event);
      snapshot = moved.snapshot;
      draft.wait(moved.wait);
      const state = snapshot.value;
      for (const said of moved.said) draft.say(() => log[said.level]({ state }, said.message));
      event = moved.effect ? await perform(moved.effect) : undefined;
    }
  }

  if (snapshot.status === 'done') {
    await draft.delete();
    const management = provider.config.management;
    const name = provider.config.name;
    if (leftBehind !== undefined) log.warn({ from: draft.state, to: 'removed' }, `${draft.state} → removed: login ${draft.desired.login} left on ${name}, not removed: ${leftBehind}; record deleted`);
    else {
      log.info(
        { from: draft.state, to: 'removed' },
        management === 'manage'
          ? `${draft.state} → removed: login ${draft.desired.login} is gone from ${name}; record deleted`
          : `${draft.state} → removed: no longer managed; login ${draft.desired.login} left on ${name} (management: ${management}); record deleted`,
      );
    }
    return { kind: 'done' };
  }
  await draft.save(snapshot, null);
  if (draft.wrote) {
    await draft.finish();
    return { kind: 'done' };
  }
  // nothing durable changed: the revision is what the queue's Redis should know, and a wait's
  // own job carries on (its id is taken while it runs, so it cannot be added anew)
  if (options.claim.rev !== draft.revision) await deps.coordination.rememberRevision(job.key, draft.revision);
  const next = draft.pendingWait;
  return job.kind === 'timer' && record.rev === job.epoch && next ? { kind: 'again', at: next.dueAt } : { kind: 'done' };
}
