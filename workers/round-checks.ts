/**
 * A round's waits run as arrays (`due-rounds.ts`): the routine checks on their tickets, the common case, without a
 * promise chain each. Every wait's trust is judged; those whose ticket the chart's kept answers (`ticket-start.ts`)
 * say end in a check have their locks taken in one script call, their checks asked together (the adapter's `AUTH`s
 * pipelined), their findings judged in a loop from the chart's kept answers, and the locks of those the check left
 * unchanged released in one script call with what the checks learned. Nothing is stepped or judged here that
 * `consumer-run.ts` would not step or judge the same way: a consumer whose check says anything but held as the ticket
 * says (a loss, a heal, a rotation, a ticket behind the record) is handed to its own run, with its lock and its check,
 * where it carries on as if it had taken them itself; so is every wait this path does not serve.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { Wait } from '../machines/machine-step.js';
import type { PersistedStep } from '../machines/step-memo.js';
import type { Claim, LockRelease, Released } from '../src/queue/coordination.js';
import { providerOf } from '../src/store/consumer-key.js';
import { memoOf } from './check-memo.js';
import { runConsumerJob, type Given, type JobDeps } from './consumer-job.js';
import { afterRelease, type Ran, type RanEach, type RoundCheckDeps } from './round-deps.js';
import { learn, type Learned } from './consumer-outcome.js';
import { lockMsOf, tellLateness, type Claimed } from './consumer-run.js';
import type { CheckResult } from './effects.js';
import { retryLater } from './job-outcome.js';
import { lockToken } from './lock-token.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { healRound, healsInRound, type FoundLost } from './round-heals.js';
import { foundAnswer, restsUnchanged, ticketStart, type TicketStart } from './ticket-start.js';
import type { WaitJob } from './wait-job.js';

export type { Ran, RanEach, RoundCheckDeps } from './round-deps.js';

/** A wait whose ticket ends in a check: where the chart starts it, and the lock the round takes for it. */
interface OnTicket {
  at: number;
  job: WaitJob;
  provider: ProviderRuntime;
  start: TicketStart;
  token: string;
  claim?: Claim;
}

/** Runs a round's waits (`jobs`), telling `ran` of each as it ends; resolves once all have. */
export async function runRound(jobs: readonly WaitJob[], deps: RoundCheckDeps, ran: RanEach): Promise<void> {
  const onTicket: OnTicket[] = [];
  const runs: Array<Promise<void>> = [];
  for (let at = 0; at < jobs.length; at++) {
    const job = jobs[at]!;
    const trust = deps.trust.judge(job);
    const found = trust === 'whole' ? onTicketOf(job, at, deps) : undefined;
    if (found) onTicket.push(found);
    else runs.push(ownRun(job, at, deps, ran, { trust }));
  }
  if (onTicket.length > 0) runs.push(checkTogether(onTicket, deps, ran));
  await Promise.all(runs);
}

/** A wait the chart's kept answers say ends in a check on its ticket (as `ConsumerRun.onTheTicket` asks it). */
function onTicketOf(job: WaitJob, at: number, deps: JobDeps): OnTicket | undefined {
  const provider = deps.providers.get(providerOf(job.key));
  if (!provider) return undefined;
  const start = ticketStart(provider.machine, job);
  const ending = start?.ending;
  if (!start || ending?.effect !== 'check' || ending.said.length > 0) return undefined;
  return { at, job, provider, start, token: lockToken() };
}

/** A wait run on its own (`consumer-job.ts`), with what the round found out for it. */
function ownRun(job: WaitJob, at: number, deps: JobDeps, ran: RanEach, given: Given): Promise<void> {
  return runConsumerJob(job, deps, given).then(
    (outcome) => ran(at, { outcome }),
    (error: unknown) => ran(at, { error }),
  );
}

/** The locks taken together, the checks asked together, the findings judged in a loop, the locks released together. */
async function checkTogether(list: OnTicket[], deps: RoundCheckDeps, ran: RanEach): Promise<void> {
  const asked = deps.now().getTime();
  let claims: Array<Claim | null>;
  try {
    claims = await deps.coordination.locks.claimMany(
      list.map(({ job, token, provider }) => ({ key: job.key, token, ttlMs: lockMsOf(provider) })),
    );
  } catch (error) {
    for (const { at } of list) ran(at, { error });
    return;
  }
  const runs: Array<Promise<void>> = [];
  const checking: OnTicket[] = [];
  for (let i = 0; i < list.length; i++) {
    const wait = list[i]!;
    const claim = claims[i] ?? null;
    if (claim === null) ran(wait.at, { outcome: retryLater('busy', deps.now()) });
    else if (claim.rev !== wait.job.rev) runs.push(ownRun(wait.job, wait.at, deps, ran, claimedAs(wait, claim, asked)));
    else {
      wait.claim = claim;
      tellLateness(wait.job, claim, wait.provider, deps);
      checking.push(wait);
    }
  }
  const results = await Promise.all(checking.map((wait) => checkOf(wait, deps)));
  runs.push(judged(checking, results, deps, ran, asked));
  await Promise.all(runs);
}

function claimedAs(wait: OnTicket, claim: Claim, asked: number, checked?: CheckResult): Given {
  return { trust: 'whole', claimed: { claim, token: wait.token, asked, ...(checked ? { checked } : {}) } };
}

/** A check on the ticket, as `ConsumerRun.check` asks it; what it threw, kept as its result. */
function checkOf({ job, provider, start, claim }: OnTicket, deps: JobDeps): Promise<CheckResult | Thrown> {
  const { spec, appliedAt } = job.ticket;
  const input = { key: job.key, provider, spec, context: start.ending!.consumer.context, appliedAt, memo: claim!.memo };
  return deps.effects.check(input).catch((error: unknown) => new Thrown(error));
}

/** What a check threw. */
class Thrown {
  constructor(readonly error: unknown) {}
}

/**
 * Each finding judged from the chart's kept answers: unchanged ones released together and due again; the others
 * handed to their own run with their lock and check; a check that threw, released and handed to the queue.
 */
async function judged(
  checking: readonly OnTicket[],
  results: ReadonlyArray<CheckResult | Thrown>,
  deps: RoundCheckDeps,
  ran: RanEach,
  asked: number,
): Promise<void> {
  const now = deps.now();
  const releases: LockRelease[] = [];
  const ended: Array<[OnTicket, Ran]> = [];
  const runs: Array<Promise<void>> = [];
  const healing: FoundLost[] = [];
  for (let i = 0; i < checking.length; i++) {
    const wait = checking[i]!;
    const result = results[i]!;
    const { key } = wait.job;
    const provider = wait.provider.config.name;
    if (result instanceof Thrown) {
      releases.push({ key, provider, token: wait.token });
      ended.push([wait, { error: result.error }]);
      continue;
    }
    const answer = unchangedAnswer(wait, result.event);
    if (!answer && healsInRound(wait, result)) healing.push({ ...wait, claim: wait.claim!, result });
    else if (!answer) runs.push(ownRun(wait.job, wait.at, deps, ran, claimedAs(wait, wait.claim!, asked, result)));
    if (!answer) continue;
    const learned: Learned = {};
    learn(learned, memoOf(result, wait.job.rev, wait.claim!.memo, now), result.event);
    releases.push({ key, provider, token: wait.token, memo: learned.memo, asked: learned.asked, askedAt: asked });
    const at = new Date(now.getTime() + answer.wait.ms);
    ended.push([
      wait,
      { outcome: { kind: 'later', at, why: 'again', ...(learned.found ? { found: learned.found } : {}) } },
    ]);
  }
  runs.push(releaseAll(releases, ended, deps, ran));
  // the quiet heals as arrays (`round-heals.ts`); what they hand over runs on its own, from where they left it
  const handedOver: Array<Promise<void>> = [];
  const handOver = (wait: FoundLost, claimed: Claimed) =>
    handedOver.push(ownRun(wait.job, wait.at, deps, ran, { trust: 'whole', claimed }));
  if (healing.length > 0) runs.push(healRound(healing, deps, ran, asked, handOver));
  await Promise.all(runs);
  await Promise.all(handedOver);
}

/**
 * The chart's kept answer to what a check found, when it changes nothing durable (as `ConsumerRun.unchangedOnTicket`
 * judges it): no effect, nothing said, a wait asked, the consumer as the ticket holds it. Undefined: stepped by its run.
 */
function unchangedAnswer(
  { provider, start }: OnTicket,
  found: ConsumerEvent,
): (PersistedStep & { wait: Wait }) | undefined {
  const answer = foundAnswer(provider.machine, start, found);
  return answer && restsUnchanged(answer, start.from) ? answer : undefined;
}

/** The locks released in one call; each wait ends once its lock is released (or the release failed: handed over). */
async function releaseAll(
  releases: readonly LockRelease[],
  ended: ReadonlyArray<[OnTicket, Ran]>,
  deps: RoundCheckDeps,
  ran: RanEach,
): Promise<void> {
  if (releases.length === 0) return;
  let released: Released[];
  try {
    released = await deps.coordination.locks.releaseMany(releases);
  } catch (error) {
    for (const [{ at }] of ended) ran(at, { error });
    return;
  }
  const now = deps.now();
  ended.forEach(([{ at, provider }, result], i) => ran(at, afterRelease(released[i], provider, result, now)));
}
