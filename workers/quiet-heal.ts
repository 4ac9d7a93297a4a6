/**
 * A heal that restores what the record says was applied (DESIGN rule 3): an event, not a write.
 *
 * A routine check on a current, trusted ticket found a served consumer not held, and the chart
 * would apply it again at once, its brake not engaged. When its provider manages its logins and
 * the spec and grant secret are the ones the ticket says were applied, the worker applies them
 * again right there, under the consumer's lock (the spec guarded as every apply is, the secret
 * read once), and confirms it: with a light check when the login was gone or disabled (a deep
 * one when that does not pass; the deep check that follows comes in the provider's budget), with
 * a deep one when its rules or passwords differed (`effects.ts`). Confirmed, the
 * wait runs again with the same ticket: no store read, no store write. The heal is said (the log, in the words of the
 * transitions it stands for), drawn (the provider's timeline), counted (the metrics a recorded
 * heal bumps) and shown (the check memo, by the caller); its finding is counted toward the consumer
 * being contested in the same round trip as the timeline's note, and said once when it becomes so
 * (`src/queue/contest.ts`).
 *
 * Anything else goes the recorded path. Before the apply (the record written before it is
 * applied, as every change is): a rotated secret or a new spec, a spec the provider's
 * configuration refuses now, a secret that cannot be read. After it, the apply's result is
 * carried on against the record, as if performed there: a confirmation that does not find it
 * held is the brake's case (rule 2: the re-apply counts, the next comes after the brake's wait),
 * an apply that does not succeed is retried on its own backoff. A lost lock ends the job
 * (`REVISION_CONFLICT`), as before any effect. Nothing here asks the record store, so a backend
 * that forgot is healed while the store does not answer.
 */
import { STATE_MEANINGS } from '../machines/consumer-health.js';
import { duration } from '../machines/consumer-words.js';
import type { Logger } from '../src/logging/logger.js';
import type { WorkObserver } from '../src/metrics/metrics.js';
import type { TimelineNotes } from '../src/queue/coordination.js';
import type { CheckTicket } from '../src/schedule/consumer-queue.js';
import type { ConsumerEvent } from '../machines/consumer-events.js';
import { contestedWords, findingWords, lossWaveMs, type Finding } from '../src/queue/contest.js';
import { timelineEventsOf } from '../src/queue/timeline-event.js';
import type { HistoryEntry } from '../src/store/consumer-record.js';
import { nodeOf } from '../src/store/transition-cause.js';
import type { CheckResult, Effects, SecretOutcome } from './effects.js';
import type { ProviderRuntime } from './provider-runtime.js';
import type { Taken } from './routine-check.js';
import { guardSpec } from './spec-guard.js';

export interface HealDeps {
  effects: Effects;
  coordination: { readonly notes: TimelineNotes };
  observer?: Pick<WorkObserver, 'transition'> | undefined;
  now: () => Date;
}

export interface HealCase {
  key: string;
  provider: ProviderRuntime;
  /** The job's ticket: the spec the record says was applied, and when. */
  ticket: CheckTicket;
  /** The routine check's steps: its check found the consumer not held. */
  taken: Taken;
  /** Before an effect: the consumer's lock extended unless fresh; throws `REVISION_CONFLICT` when it was lost. */
  keepLock: (effect: 'apply' | 'check') => Promise<void>;
  log: Logger;
}

export type HealOutcome =
  /** Applied again and confirmed held: the confirmation, as it ended. */
  | { kind: 'confirmed'; confirmed: CheckResult; at: Date }
  /**
   * Applied again but not confirmed (the confirmation did not find it held, or could not ask), or
   * the apply did not succeed: the apply's result, carried on against the record from the routine
   * check's steps (the brake counts a successful re-apply; a failed one is retried on its own backoff).
   */
  | { kind: 'applied'; applied: ConsumerEvent; confirmation?: CheckResult; at: Date }
  /** Nothing applied here: the recorded path, from the routine check's steps (`why`: in words, for the debug log). */
  | { kind: 'recorded'; why: string };

/**
 * Whether the routine check's steps are a heal the record need not be told of: a served consumer
 * found not held, its brake not engaged, that the chart applies again at once, on a provider
 * that manages its logins, with the spec the ticket says was applied.
 */
export function healsQuietly(provider: ProviderRuntime, { from, checked }: Taken, ticket: CheckTicket): boolean {
  return (
    provider.config.management === 'manage' &&
    checked?.event.type === 'NOT_HELD' &&
    checked.step.effect === 'apply' &&
    STATE_MEANINGS[from.state].healthy &&
    from.context.brakeCount === 0 &&
    ticket.spec.specHash === from.context.appliedSpecHash
  );
}

/**
 * Applies again what the ticket says was applied and confirms it (see the file's comment); `c.taken` passed {@link
 * healsQuietly}.
 */
export async function healQuietly(c: HealCase, deps: HealDeps): Promise<HealOutcome> {
  const { key, provider, ticket, taken, log } = c;
  const checked = taken.checked!;
  // the machine as it would apply again (`lost`): its context, and its reason in the chart's words
  const lost = checked.step.snapshot;
  // the policy, checked where rights are applied, as the recorded path checks it
  const verdict = guardSpec(provider, key, ticket.spec, 'apply');
  if (verdict.kind === 'refused')
    return { kind: 'recorded', why: 'its spec is not what the provider configuration gives now' };
  // the grant secret the check read (once per heal), else read now
  const secret: SecretOutcome = checked.secret
    ? { kind: 'read', password: checked.secret() }
    : await deps.effects.secretFor(ticket.spec, provider);
  if (secret.kind === 'unusable')
    return { kind: 'recorded', why: `its grant secret cannot be used (${secret.event.type})` };
  // a rotation (or a changed spec) changes what is applied: written first, on the recorded path
  if (!deps.effects.isApplied(secret.password, lost.context))
    return { kind: 'recorded', why: 'its grant secret rotated since it was applied' };
  for (const said of checked.step.said) log[said.level]({ state: lost.value, ...said.fields }, said.message);
  const input = { key, provider, spec: { ...ticket.spec, values: verdict.values }, context: lost.context };
  await c.keepLock('apply');
  const applied = await deps.effects.apply({ ...input, password: secret.password });
  if (applied.type !== 'APPLIED') return { kind: 'applied', applied, at: deps.now() };
  await c.keepLock('check');
  const found = checked.event.type === 'NOT_HELD' ? checked.event.reason : undefined;
  const confirmation = await deps.effects.confirm(
    { ...input, spec: ticket.spec, appliedAt: ticket.appliedAt, memo: null },
    secret.password,
    found,
  );
  const at = deps.now();
  if (confirmation.event.type !== 'HELD') return { kind: 'applied', applied, confirmation, at };
  await told(c, deps, at);
  return { kind: 'confirmed', confirmed: confirmation, at };
}

/** The heal told as the two transitions it stands for would be: the log, the provider's timeline, the metrics. */
async function told({ key, provider, taken, log }: HealCase, deps: HealDeps, at: Date): Promise<void> {
  const { from, checked } = taken;
  const reason = checked!.step.snapshot.context.reason;
  const foundAt = checked!.lastCheck?.at ?? at;
  // found by the check, put right by the heal, on the node(s) the check named
  const node = checked!.event.type === 'NOT_HELD' ? nodeOf(checked!.event.node) : undefined;
  const where = node !== undefined ? { node } : {};
  const toLost: HistoryEntry = { at: foundAt, from: from.state, to: 'lost', reason, by: 'check', ...where };
  const toHeld: HistoryEntry = { at, from: 'lost', to: 'held', reason: 'applied again', by: 'heal', ...where };
  const tookMs = at.getTime() - foundAt.getTime();
  const finding = findingOf(key, provider, checked!.event, foundAt);
  const counted = await deps.coordination.notes.noteTimeline(
    [...timelineEventsOf(key, toLost, []), ...timelineEventsOf(key, toHeld, [toLost])],
    finding,
  );
  const name = provider.config.name;
  deps.observer?.transition(name, toLost, []);
  deps.observer?.transition(name, toHeld, [toLost]);
  log.info(
    { from: from.state, to: 'held', via: 'lost', reason, tookMs, recorded: false },
    `${from.state} → lost → held: ${reason ?? 'not held'}; applied again in ${duration(tookMs)} (not written: the record already says this spec and grant secret are applied)`,
  );
  // said once: as it becomes contested, not at each further finding
  if (finding && counted?.counted && counted.became) {
    log.warn(
      { contested: true, findings: counted.findings, reason: finding.reason },
      contestedWords(key, counted.findings, finding.windowMs, finding.words),
    );
  }
}

/**
 * The heal's finding, counted toward its consumer being contested (`src/queue/contest.ts`): the check's reason and
 * words.
 */
function findingOf(key: string, provider: ProviderRuntime, found: ConsumerEvent, at: Date): Finding | undefined {
  if (found.type !== 'NOT_HELD') return undefined;
  const { contestedWindowMs, verifyEveryMs } = provider.config.timing;
  return {
    key,
    reason: found.reason,
    words: findingWords(found.reason, found.detail, found.node),
    at: at.getTime(),
    windowMs: contestedWindowMs,
    waveMs: lossWaveMs(verifyEveryMs),
  };
}
