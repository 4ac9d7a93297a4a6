/**
 * A round's quiet heals as arrays (`round-checks.ts` hands them over): the consumers its routine checks found not
 * held whose heal restores what the ticket says was applied (`ticket-heal.ts`: served, brake not engaged, the spec
 * the ticket says was applied, a provider that manages its logins). The chart is stepped from its kept answers
 * (`machines/step-memo.ts`) as `consumer-run.ts` steps it on the ticket, the applies are sent together (the adapter's
 * pipelined batch, `call-batch.ts`), the confirmations asked together, the heals noted (`heal-noted.ts`) and the locks
 * released in one script call each. The log says what the run would: the check's finding (`not held (missing: …)`)
 * as the chart says it, then the heal's line; each consumer's history `held → lost → held` is the chart's own steps.
 *
 * Anything else (the chart asking for something other than a heal, a rotation, a spec the provider refuses now, a
 * lost lock, a failed apply, a confirmation that does not find it held) is handed to the consumer's own run with its
 * lock and what was done for it already (`Claimed`): the run carries on from there and asks nothing twice.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { persist, restore, samePersisted, step, type PersistedConsumer, type Wait } from '../machines/machine-step.js';
import { keepStep, keptStep, type PersistedStep } from '../machines/step-memo.js';
import type { Logger } from '../src/logging/logger.js';
import type { Claim, LockRelease, Released } from '../src/queue/coordination.js';
import { jobCause } from '../src/store/transition-cause.js';
import { lastCheckOf, memoOf } from './check-memo.js';
import { learn, type Learned } from './consumer-outcome.js';
import { FRESH_LOCK_MS, lockMsOf, type Claimed } from './consumer-run.js';
import type { CheckResult } from './effects.js';
import type { JobOutcome } from './job-outcome.js';
import { noteHeal } from './heal-noted.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { afterRelease, type RanEach, type RoundCheckDeps } from './round-deps.js';
import { RunTrail } from './run-trail.js';
import { healOf, healsQuietly, type TicketHeal } from './ticket-heal.js';
import type { TicketStart } from './ticket-start.js';
import type { WaitJob } from './wait-job.js';

/** A wait whose routine check (on its ticket, under the round's lock) found it not held. */
export interface FoundLost {
  at: number;
  job: WaitJob;
  provider: ProviderRuntime;
  start: TicketStart;
  token: string;
  claim: Claim;
  result: CheckResult;
}

/** Hands a wait to its own run, with its lock and what was done for it already. */
export type HandOver = (wait: FoundLost, claimed: Claimed) => void;

/** One heal under way: its chart's steps, its log's words, what its effects answered, when its lock was last kept. */
interface Healing {
  wait: FoundLost;
  lost: PersistedStep;
  trail: RunTrail;
  log: Logger;
  heldSince: number;
  heal?: TicketHeal;
  applied?: ConsumerEvent;
  appliedAt?: Date;
}

/** Whether a check's finding on the ticket is one this path heals (else the round hands it to its own run). */
export function healsInRound(wait: Pick<FoundLost, 'provider' | 'job' | 'start'>, result: CheckResult): boolean {
  return wait.start.ending !== undefined && healsQuietly(wait.provider, wait.job, wait.start.from, result);
}

/** Heals `list` together (see the file's comment); each wait ends (`ran`) or is handed over. */
export async function healRound(
  list: readonly FoundLost[],
  deps: RoundCheckDeps,
  ran: RanEach,
  asked: number,
  handOver: HandOver,
): Promise<void> {
  const stepped: Healing[] = [];
  for (const wait of list) {
    const healing = lostStep(wait, deps, asked);
    if (healing) stepped.push(healing);
    else handOver(wait, claimedOf(wait, asked));
  }
  const ready = await keptLocks(await withHeals(stepped, deps, handOver), deps, handOver);
  const applied = await applyAll(ready, deps, handOver);
  await confirmAll(await keptLocks(applied, deps, handOver), deps, ran, handOver);
}

/** The lock and the check a round took for a wait, and the effects performed for it: its run's start. */
function claimedOf(wait: FoundLost, asked: number, done: Partial<Claimed> = {}): Claimed {
  return { claim: wait.claim, token: wait.token, asked, checked: wait.result, ...done };
}

/** What was done for a heal handed over: its run starts there. */
function handedOver({ wait, heldSince, applied, appliedAt }: Healing, confirmation?: CheckResult): Claimed {
  // once applied, the check's finding was said (as the applies began): the run does not say it again
  const done = applied ? { applied, said: true, ...(appliedAt ? { appliedAt } : {}) } : {};
  return claimedOf(wait, heldSince, { ...done, ...(confirmation ? { confirmation } : {}) });
}

/**
 * The chart stepped as the run steps it on the ticket: the wait's end (its kept answer), then the check's finding;
 * undefined when the finding does not ask for an apply (the run steps it).
 */
function lostStep(wait: FoundLost, deps: RoundCheckDeps, asked: number): Healing | undefined {
  const { start, job, provider, result } = wait;
  const found = result.event;
  const ending = start.ending!;
  const lost = stepKept(provider, ending.consumer, found);
  if (lost.effect !== 'apply') return undefined;
  const trail = new RunTrail(start.from.state, jobCause('wait', job.wait));
  trail.mark(ending.consumer, ending.effect, deps);
  if (found.type === 'NOT_HELD' && found.node !== undefined) trail.concerns(found.node);
  trail.mark(lost.consumer, lost.effect, deps);
  return { wait, lost, trail, log: deps.logger.child({ consumer: job.key }), heldSince: asked };
}

/**
 * A step from the chart's kept answers, else stepped (and kept when it says nothing: a finding that says something is
 * in the backend's words), as `ConsumerRun.stepOnTicket` takes it.
 */
function stepKept(provider: ProviderRuntime, from: PersistedConsumer, event: ConsumerEvent): PersistedStep {
  const { machine } = provider;
  const kept = keptStep(machine, from, event);
  if (kept !== undefined) return kept;
  const stepped = step(machine, restore(machine, from), event);
  if (stepped.said.length === 0) keepStep(machine, from, event, stepped);
  return { consumer: persist(stepped.snapshot), effect: stepped.effect, wait: stepped.wait, said: stepped.said };
}

/** What a step says, said in the consumer's log as the run says it. */
function say({ log }: Healing, { consumer, said }: PersistedStep): void {
  for (const saying of said) log[saying.level]({ state: consumer.state, ...saying.fields }, saying.message);
}

/** What each heal applies (`ticket-heal.ts`); a heal refused there handed over (its run says why, and reads on). */
async function withHeals(steps: readonly Healing[], deps: RoundCheckDeps, handOver: HandOver): Promise<Healing[]> {
  const heals = await Promise.all(
    steps.map(({ wait, lost }) => healOf(wait.provider, deps.effects, wait.job, wait.result, lost.consumer)),
  );
  return steps.filter((healing, i) => {
    const heal = heals[i]!;
    if (typeof heal === 'string') handOver(healing.wait, handedOver(healing));
    else healing.heal = heal;
    return typeof heal !== 'string';
  });
}

/**
 * Each lock kept before an effect as `ConsumerRun.keepLock` keeps it (extended unless claimed or extended within
 * {@link FRESH_LOCK_MS}); a lock lost handed over (its run finds it lost, and writes nothing).
 */
async function keptLocks(list: readonly Healing[], deps: RoundCheckDeps, handOver: HandOver): Promise<Healing[]> {
  const now = deps.now().getTime();
  const kept = await Promise.all(
    list.map(({ wait, heldSince }) =>
      now - heldSince < FRESH_LOCK_MS
        ? Promise.resolve(true)
        : deps.coordination.locks.extend(wait.job.key, wait.token, lockMsOf(wait.provider)).catch(() => false),
    ),
  );
  return list.filter((healing, i) => {
    if (!kept[i]) handOver(healing.wait, handedOver(healing));
    else if (now - healing.heldSince >= FRESH_LOCK_MS) healing.heldSince = now;
    return kept[i];
  });
}

/** The check's finding said as the applies begin, the applies sent together; a failed apply handed over. */
async function applyAll(ready: readonly Healing[], deps: RoundCheckDeps, handOver: HandOver): Promise<Healing[]> {
  for (const healing of ready) say(healing, healing.lost);
  const answers = await Promise.all(
    ready.map(({ heal }) =>
      deps.effects.apply({ ...heal!.input, password: heal!.password, secretMac: heal!.secretMac }),
    ),
  );
  const appliedAt = deps.now();
  return ready.filter((healing, i) => {
    healing.applied = answers[i]!;
    healing.appliedAt = appliedAt;
    if (healing.applied.type !== 'APPLIED') handOver(healing.wait, handedOver(healing));
    return healing.applied.type === 'APPLIED';
  });
}

/** A heal at rest: the wait asked after it, and its note under way. */
interface Healed {
  at: number;
  again: Date;
  noting: Promise<void>;
  provider: ProviderRuntime;
}

/**
 * The confirmations asked together; each heal confirmed held and resting as the ticket holds it is noted, its lock
 * released with the others in one call; any other handed over with its apply and confirmation.
 */
async function confirmAll(
  applied: readonly Healing[],
  deps: RoundCheckDeps,
  ran: RanEach,
  handOver: HandOver,
): Promise<void> {
  const confirmations = await Promise.all(applied.map((healing) => confirmOf(healing, deps)));
  const now = deps.now();
  const releases: LockRelease[] = [];
  const healed: Healed[] = [];
  applied.forEach((healing, i) => {
    const confirmation = confirmations[i]!;
    const rest = confirmation.event.type === 'HELD' ? restingHealed(healing, confirmation.event, deps) : undefined;
    if (rest === undefined) return handOver(healing.wait, handedOver(healing, confirmation));
    const { wait, trail, log } = healing;
    const again = new Date(now.getTime() + rest.ms);
    releases.push(releaseOf(wait, confirmation, now, healing.heldSince));
    const outcome = { key: wait.job.key, provider: wait.provider, at: again, trail: trail.entries, log };
    const noting = noteHeal({ ...outcome, kind: 'healed', found: wait.result.event }, deps);
    healed.push({ at: wait.at, again, noting, provider: wait.provider });
  });
  await releaseHealed(releases, healed, deps, ran);
}

/** A heal's confirmation: a check with the password it was given (light first where that shows it put right). */
function confirmOf({ wait, heal }: Healing, deps: RoundCheckDeps): Promise<CheckResult> {
  const { job, result } = wait;
  const asking = { ...heal!.input, spec: job.ticket.spec, appliedAt: job.ticket.appliedAt, memo: null };
  const reason = result.event.type === 'NOT_HELD' ? result.event.reason : undefined;
  return deps.effects.confirm(asking, heal!.password, reason);
}

/** What a heal's confirmation is to the chart: a check asked at once (as `consumer-run.ts` tells it). */
const CONFIRM: ConsumerEvent = { type: 'CHECK_NOW' };

/**
 * The apply's result, the confirmation asked and its answer, stepped from the chart's kept answers as the run steps
 * them: the wait asked, when the consumer rests as the ticket holds it but for its reason's words (what is said
 * said); else undefined, nothing said (the run steps them again).
 */
function restingHealed(healing: Healing, held: ConsumerEvent, deps: RoundCheckDeps): Wait | undefined {
  const { provider, start } = healing.wait;
  const steps: PersistedStep[] = [];
  let last = healing.lost;
  for (const event of [healing.applied!, CONFIRM, held]) steps.push((last = stepKept(provider, last.consumer, event)));
  const { from } = start;
  const rest = { state: last.consumer.state, context: { ...last.consumer.context, reason: from.context.reason } };
  if (!last.wait || !samePersisted(rest, from)) return undefined;
  for (const moved of steps) {
    healing.trail.mark(moved.consumer, moved.effect, deps);
    say(healing, moved);
  }
  return last.wait;
}

/**
 * A healed consumer's lock release, with what its check and confirmation learned (as the run's release says), asked
 * since `askedAt` (its lock last kept, before its apply): a node event after it leaves the consumer suspect.
 */
function releaseOf(wait: FoundLost, confirmation: CheckResult, now: Date, askedAt: number): LockRelease {
  const { job, provider, claim, result, token } = wait;
  const learned: Learned = {};
  learn(learned, memoOf(result, job.rev, claim.memo, now), result.event);
  const memo = memoOf(confirmation, job.rev, claim.memo, now);
  const detail = lastCheckOf(result.event, now)?.detail ?? 'not held';
  learn(learned, memo && { ...memo, detail: `healed: ${detail}; applied again` }, confirmation.event);
  return { key: job.key, provider: provider.config.name, token, memo: learned.memo, asked: learned.asked, askedAt };
}

/** The heals' locks released in one call, their notes with it; each wait ends as its run's would: due again, healed. */
async function releaseHealed(
  releases: readonly LockRelease[],
  healed: readonly Healed[],
  deps: RoundCheckDeps,
  ran: RanEach,
): Promise<void> {
  if (releases.length === 0) return;
  let released: Released[];
  try {
    [released] = await Promise.all([
      deps.coordination.locks.releaseMany(releases),
      Promise.all(healed.map(({ noting }) => noting)),
    ]);
  } catch (error) {
    for (const { at } of healed) ran(at, { error });
    return;
  }
  const now = deps.now();
  healed.forEach(({ at, again, provider }, i) => {
    const outcome: JobOutcome = { kind: 'later', at: again, why: 'again', found: 'healed' };
    ran(at, afterRelease(released[i], provider, { outcome }, now));
  });
}
