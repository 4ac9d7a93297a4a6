/**
 * The effects a consumer machine asks for, performed against the provider's adapter with a
 * deadline. Each returns the event that reports its result. The grant secret is read here,
 * when needed, and everything an effect reports is scrubbed of it.
 *
 * A check is light (the adapter's `authenticates`: cheap for the backend) unless a deep one
 * is due: the first check after an apply, one every deep-check interval (jittered per consumer:
 * as often as the provider's `deepCheckBudget` allows, see `deep-check-interval.ts`), and one to confirm any light
 * check that did not pass, so that the reason logged
 * is the backend's own.
 *
 * A provider's `management` is kept here, where the adapter is called: `observe` never creates,
 * changes or removes (an apply only asks whether the backend holds the consumer as declared;
 * not held is `NOT_APPLIED`), and `no-delete` (like `observe`) leaves a removed consumer's login.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { ConsumerContext } from '../machines/consumer-machine.js';
import { jittered, unitHash } from '../machines/delays.js';
import type { Adapter, Grant, NotHeldReason } from '../src/adapters/adapter.js';
import { deepCheckIntervalMs } from '../src/config/deep-check-interval.js';
import { inRotationOverlap } from '../src/config/rotation-overlap.js';
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import type { CheckMemo } from '../src/queue/coordination.js';
import type { ProviderGate } from './provider-gate.js';
import { fingerprintAt, secretFingerprint } from '../src/secrets/fingerprint.js';
import { readGrantSecret, type FindingsHeed } from '../src/secrets/grant-secret.js';
import { secretRootsOf, type SecretRoots } from '../src/secrets/secret-roots.js';
import type { DesiredSpec } from '../src/store/consumer-record.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { CallBatch } from './call-batch.js';
import type { OverlapEvidence, OverlapVerdict } from './overlap-evidence.js';
import { TurnDeadlines, type CallDeadline } from './turn-deadline.js';

/** The spec an effect works on: what is (or is to be) applied. */
export type EffectSpec = Pick<DesiredSpec, 'login' | 'values' | 'secretPath' | 'specHash'>;

export interface EffectInput {
  key: string;
  provider: ProviderRuntime;
  spec: EffectSpec;
  /** The machine's context as the effect starts. */
  context: ConsumerContext;
}

export interface CheckInput extends EffectInput {
  /** When the spec was last applied (ms since the epoch), if it was. */
  appliedAt: number | null;
  /** What the consumer's previous checks learned, if anything is known. */
  memo: CheckMemo | null;
}

export interface CheckResult {
  event: ConsumerEvent;
  /** Whether the backend answered a deep check (rules compared). */
  deep: boolean;
  /**
   * A check that found the consumer not held: the grant secret it read, for the heal that follows
   * in the same run (`consumer-run.ts`), so that a heal reads it once. A function, so that nothing
   * that copies or serializes the result carries the secret; never kept beyond the job.
   */
  secret?: () => string;
  /** With {@link secret}: its keyed fingerprint, as the check computed it (the heal's apply needs it too). */
  secretMac?: string;
}

/** The grant secret an apply needs, as read: the password, or the event that says why the apply cannot start. */
/** The grant secret read, or the event that says why it cannot be used. */
export type SecretOutcome = { kind: 'read'; password: string } | { kind: 'unusable'; event: ConsumerEvent };

export interface ApplyInput extends EffectInput {
  /** The grant secret, as {@link Effects.secretFor} read it for this apply; never kept. */
  password: string;
  /** The password's keyed fingerprint, when the caller computed it already (a heal: its check did); else computed. */
  secretMac?: string;
}

export interface Effects {
  /**
   * Reads the grant secret of an apply before the apply is written down: the password, or the
   * event that says why the apply cannot start (its grant secret missing, unreadable, or wrong),
   * so that a consumer waiting for its secret stays in its waiting state rather than passing
   * through `applying` at every try. The apply is handed the password read here: one read per apply.
   */
  secretFor(spec: EffectSpec, provider: ProviderRuntime): Promise<SecretOutcome>;
  apply(input: ApplyInput): Promise<ConsumerEvent>;
  check(input: CheckInput): Promise<CheckResult>;
  remove(input: EffectInput): Promise<ConsumerEvent>;
  /**
   * Whether `password` is the grant secret the machine last applied (its keyed fingerprint is the
   * context's `appliedSecretMac`): false once the secret rotated. What tells a heal of what was
   * applied (written nowhere) from a change of it (written first).
   */
  isApplied(password: string, context: ConsumerContext): boolean;
  /**
   * A check with the password an apply was just given, not read again: what confirms a heal
   * (`workers/consumer-run.ts`); light when what the heal's check `found` is one it shows put right.
   */
  confirm(input: CheckInput, password: string, found?: NotHeldReason): Promise<CheckResult>;
}

export interface EffectDeps {
  fingerprintKey: Buffer;
  gate: ProviderGate;
  scrubber: Scrubber;
  now: () => Date;
  /** A provider answered after this process saw it fail: its could-not-ask consumers may be asked again. */
  answeredAgain?: (provider: string) => void;
  /** A provider could not be asked. */
  couldNotAsk?: (provider: string) => void;
  /**
   * A batch of `size` applies (`create`) or deep checks (`holds`) was sent to a provider's adapter (`call-batch.ts`).
   */
  batched?: (provider: string, call: 'create' | 'holds', size: number) => void;
  /**
   * Told what a full read of an accepted grant secret found its writer may not have meant (the warning, once per file:
   * `src/secrets/secret-warnings.ts`).
   */
  secretFindings?: FindingsHeed;
  /**
   * A rotated grant secret was applied on a provider whose adapter can list connections: noted, for the
   * old-connections watch (`src/old-connections/old-connections-watch.ts`); `at`: ms since the epoch.
   */
  rotated?: (provider: string, key: string, login: string, at: number) => Promise<void>;
  /** A rotation's overlap, once `rotationOverlap` has run: kept or cut over on evidence (`overlap-evidence.ts`). */
  overlap?: OverlapEvidence;
}

/** Each provider's grant-secret roots, one object per configuration (read at every check, so made once). */
const secretRoots = new WeakMap<ProviderRuntime['config'], SecretRoots>();

function rootsOf({ config }: ProviderRuntime): SecretRoots {
  let roots = secretRoots.get(config);
  if (roots === undefined) secretRoots.set(config, (roots = secretRootsOf(config)));
  return roots;
}

async function readSecret(
  path: string,
  provider: ProviderRuntime,
  scrubber: Scrubber,
  heed: FindingsHeed | undefined,
): Promise<SecretOutcome> {
  try {
    const password = await readGrantSecret(path, rootsOf(provider), heed);
    // what this backend would refuse (an S3 secret over 128 characters) is refused here, before anything is sent
    const refused = provider.config.adapter.secretProblem?.(password);
    if (refused !== undefined)
      return {
        kind: 'unusable',
        event: { type: 'SECRET_INVALID', detail: `grant secret ${path} ${refused} (${provider.config.adapter.kind})` },
      };
    return { kind: 'read', password };
  } catch (error) {
    if (isHoldfastError(error, 'SECRET_MISSING')) return { kind: 'unusable', event: { type: 'SECRET_MISSING', path } };
    if (isHoldfastError(error, 'SECRET_UNREADABLE'))
      return { kind: 'unusable', event: { type: 'SECRET_UNREADABLE', detail: error.message } };
    if (isHoldfastError(error, 'SECRET_INVALID'))
      return { kind: 'unusable', event: { type: 'SECRET_INVALID', detail: error.message } };
    return { kind: 'unusable', event: { type: 'APPLY_FAILED', error: scrubber.describe(error) } };
  }
}

/** Whether `now` falls in the rotation overlap that follows an apply at `appliedAt`. */
function inOverlap(appliedAt: number | null, provider: ProviderRuntime, now: number): boolean {
  return inRotationOverlap(appliedAt, provider.config.rotationOverlapMs, now);
}

/** Whether a deep check is due for this consumer now. */
export function deepCheckDue(
  key: string,
  appliedAt: number | null,
  memo: CheckMemo | null,
  provider: ProviderRuntime,
  now: number,
): boolean {
  if (memo === null || memo.deepAt === null || (appliedAt !== null && memo.deepAt < appliedAt)) return true;
  // the overlap after an apply is over: one deep check finds (and ends) what it kept
  const overlap = provider.config.rotationOverlapMs;
  if (overlap !== undefined && appliedAt !== null && now >= appliedAt + overlap && memo.deepAt < appliedAt + overlap)
    return true;
  const { verifyEveryMs, jitter } = provider.config.timing;
  const interval = deepIntervalOf(provider);
  // the budget affords a deep check at every interval: every check is one (jitter would skip every other one)
  if (interval <= verifyEveryMs) return true;
  return now - memo.deepAt >= jittered(interval, jitter, unitHash(`${key}#deep`));
}

/** The provider's deep-check interval in force in this process (ms). */
export function deepIntervalOf(provider: ProviderRuntime): number {
  const { timing, adapter } = provider.config;
  return deepCheckIntervalMs({ timing, costUs: adapter.deepCheckCostUs, consumers: provider.fleet.consumers });
}

const NO_VERDICT: OverlapVerdict = { kind: 'none' };

/**
 * Whether `rotationOverlap` has run since the apply at `appliedAt` and no deep check followed its end yet: where a
 * rotation's overlap is kept or cut over on evidence. After that deep check (a consumer applied without a rotation
 * holds no other password) nothing more is asked: a routine check costs nothing more.
 */
function afterOverlap(
  appliedAt: number | null,
  memo: CheckMemo | null,
  provider: ProviderRuntime,
  now: number,
): boolean {
  const overlap = provider.config.rotationOverlapMs;
  if (overlap === undefined || appliedAt === null || now < appliedAt + overlap) return false;
  return memo === null || memo.deepAt === null || memo.deepAt < appliedAt + overlap;
}

/**
 * The passwords an overlap kept are to go: `CHANGED` (the apply that follows sets the grant's alone), its reason the
 * verdict's (on evidence, or at `rotationOverlapMax`), the cutover noted for the status.
 */
async function cutOver(
  key: string,
  provider: ProviderRuntime,
  verdict: OverlapVerdict,
  deps: EffectDeps,
  now: number,
): Promise<CheckResult> {
  if (verdict.kind === 'cut') await deps.overlap?.cutOver(provider, key, now);
  const what =
    verdict.kind === 'cut'
      ? `${verdict.why}: removing the old password`
      : "passwords besides the grant secret's accepted (a rotation overlap over, or added by hand): removing them";
  return { event: { type: 'CHANGED', what }, deep: true };
}

/** A check that fails this soon after its provider answered another one races the provider's recovery. */
const RECOVERY_RACE_MS = 2_000;

/** Which providers this process saw answer, and last saw fail to answer. */
class Answers {
  private readonly batches = new WeakMap<Adapter, CallBatch>();
  private readonly deadlines = new TurnDeadlines();
  private readonly failing = new Set<string>();
  private readonly answeredAt = new Map<string, number>();

  constructor(private readonly deps: EffectDeps) {}

  async answered(name: string): Promise<void> {
    await this.deps.gate.answered(name);
    this.answeredAt.set(name, Date.now());
    if (this.failing.delete(name)) this.deps.answeredAgain?.(name);
  }

  /** The provider's adapter calls, batched per turn of the event loop (`call-batch.ts`). */
  batchOf({ adapter, config }: ProviderRuntime): CallBatch {
    let batch = this.batches.get(adapter);
    if (batch === undefined) {
      const { batched } = this.deps;
      batch = new CallBatch(adapter, batched ? (call, size) => batched(config.name, call, size) : undefined);
      this.batches.set(adapter, batch);
    }
    return batch;
  }

  /** An effect's deadline: aborts at `checkTimeout`, one signal shared by the calls of a turn (`turn-deadline.ts`). */
  deadline(provider: ProviderRuntime): CallDeadline {
    return this.deadlines.take(provider.config.timing.checkTimeoutMs);
  }

  failed(name: string): void {
    this.failing.add(name);
    this.deps.couldNotAsk?.(name);
    // begun before the provider came back: its consumer is asked again with the others
    if (Date.now() - (this.answeredAt.get(name) ?? 0) < RECOVERY_RACE_MS) this.deps.answeredAgain?.(name);
  }
}

export function createEffects(deps: EffectDeps): Effects {
  const answers = new Answers(deps);
  return {
    secretFor: (spec, provider) => readSecret(spec.secretPath, provider, deps.scrubber, deps.secretFindings),
    apply: (input) => apply(input, deps, answers),
    check: (input) => check(input, deps, answers),
    remove: (input) => remove(input, deps, answers),
    isApplied: (password, context) => secretFingerprint(deps.fingerprintKey, password) === context.appliedSecretMac,
    confirm: (input, password, found) => confirm(input, password, found, deps, answers),
  };
}

/** What a light check shows put right: a login that was gone or disabled authenticates again. */
const LIGHT_CONFIRMS: ReadonlySet<NotHeldReason> = new Set(['missing', 'disabled']);

/**
 * What confirms a heal, with a password already read. When what the check `found` is one a light
 * check shows put right (a login gone or disabled), the light check (the login authenticates, on
 * every node, with the password the apply just set, its rules set whole, `reset` first, in the
 * same command), and a deep one only when that does not pass, which says why; the deep check
 * that follows the apply is then the consumer's next one in its provider's budget. Confirmed deep
 * at once, a cache that forgot 10,000 consumers described 10,000 rule sets in the heal's window
 * (`ACL GETUSER` of a user that exists: about 1.5 ms of its one thread each under load), which
 * bounded the heal. Rules or passwords that differed are confirmed deep: only a deep check sees
 * them changed back again (the brake, and quarantine, count on it). An adapter that cannot be
 * asked holds what it was given.
 */
async function confirm(
  input: CheckInput,
  password: string,
  found: NotHeldReason | undefined,
  deps: EffectDeps,
  answers: Answers,
): Promise<CheckResult> {
  const { adapter } = input.provider;
  if (!asks(adapter)) return { event: { type: 'HELD' }, deep: false };
  const first = found !== undefined && LIGHT_CONFIRMS.has(found) ? 'light first' : undefined;
  return ask({ ...input, memo: null }, adapter, password, deps, answers, first);
}

async function apply(
  { key, provider, spec, context, password, secretMac: known }: ApplyInput,
  deps: EffectDeps,
  answers: Answers,
): Promise<ConsumerEvent> {
  // made only when something is to be said: an apply that succeeds says nothing (its forms cost a hash and a sort)
  const scrub = () => deps.scrubber.with(password);
  const limit = answers.deadline(provider);
  try {
    const secretMac = known ?? secretFingerprint(deps.fingerprintKey, password);
    // a rotated grant secret, with an overlap: the old password stays accepted beside the new one for a while
    const rotating =
      provider.config.rotationOverlapMs !== undefined &&
      context.appliedSecretMac !== null &&
      context.appliedSecretMac !== secretMac;
    const grant: Grant = {
      login: spec.login,
      password,
      values: spec.values,
      ...(rotating ? { keepPasswords: true } : {}),
    };
    if (provider.config.management === 'observe') {
      // observe only: asked, never applied
      if (!provider.adapter.holds)
        return {
          type: 'NOT_APPLIED',
          reason: 'unknown',
          detail: `the ${provider.config.adapter.kind} adapter cannot be asked`,
        };
      const answer = await answers.batchOf(provider).holds(grant, limit);
      await answers.answered(provider.config.name);
      if (!answer.held) return { type: 'NOT_APPLIED', reason: answer.reason, detail: scrub().scrub(answer.detail) };
      return { type: 'APPLIED', specHash: spec.specHash, secretMac };
    }
    // a rotation's moment is taken before it is sent: no client of the new password connected before it
    const sentAt = deps.now().getTime();
    await answers.batchOf(provider).create(grant, limit);
    await answers.answered(provider.config.name);
    if (context.appliedSecretMac !== null && context.appliedSecretMac !== secretMac && provider.adapter.openConnections)
      await deps.rotated?.(provider.config.name, key, spec.login, sentAt).catch(() => undefined);
    return { type: 'APPLIED', specHash: spec.specHash, secretMac };
  } catch (error) {
    const words = scrub().describe(error);
    return isHoldfastError(error, 'BACKEND_REFUSED')
      ? { type: 'APPLY_REFUSED', error: words }
      : {
          type: 'APPLY_FAILED',
          error: words,
          ...(isHoldfastError(error, 'DEADLINE_EXCEEDED') ? { timedOut: true } : {}),
        };
  } finally {
    limit.done();
  }
}

/**
 * A check: what can be told without the backend (spec or secret changed, secret unreadable), else the backend asked.
 */
async function check(input: CheckInput, deps: EffectDeps, answers: Answers): Promise<CheckResult> {
  const { provider, spec, context } = input;
  const shallow = { deep: false };
  if (spec.specHash !== context.appliedSpecHash)
    return { event: { type: 'CHANGED', what: 'spec changed since it was applied' }, ...shallow };
  const secret = await readSecret(spec.secretPath, provider, deps.scrubber, deps.secretFindings);
  if (secret.kind === 'unusable') {
    const { event } = secret;
    return {
      event: event.type === 'APPLY_FAILED' ? { type: 'CHECK_FAILED', error: event.error, timedOut: false } : event,
      ...shallow,
    };
  }
  const secretMac = fingerprintAt(deps.fingerprintKey, spec.secretPath, secret.password);
  const { adapter } = provider;
  if (!asks(adapter))
    return secretMac === context.appliedSecretMac ? { event: { type: 'HELD' }, ...shallow } : rotated(shallow);
  const name = provider.config.name;
  const admission = await deps.gate.admit(name, provider.config.timing.checkTimeoutMs + 1000);
  if (!admission.admitted) {
    return {
      event: {
        type: 'CHECK_FAILED',
        error: `checks on ${name} are paused since ${admission.pause.since}: ${admission.pause.reason}`,
        timedOut: false,
      },
      ...shallow,
    };
  }
  if (secretMac !== context.appliedSecretMac)
    return rotatedOrRekeyed(input, adapter, secret.password, secretMac, deps, answers);
  const result = await ask(input, adapter, secret.password, deps, answers);
  if (result.event.type !== 'NOT_HELD') return result;
  const { password } = secret;
  return { ...result, secret: () => password, secretMac };
}

function rotated(result: Omit<CheckResult, 'event'>): CheckResult {
  return { event: { type: 'CHANGED', what: 'grant secret rotated' }, ...result };
}

/**
 * A grant secret whose fingerprint is not the one the record keeps: rotated, or fingerprinted
 * under another fingerprint key (a release started from another directory, a key file not
 * kept), which the fingerprints alone cannot tell apart. The backend can: asked deeply with
 * this secret, a consumer it holds keeps this fingerprint and is not applied again (an upgrade
 * stays quiet); one it does not hold is a rotation, applied as before. A check that could not
 * ask applies nothing: asked again at the next.
 */
async function rotatedOrRekeyed(
  input: CheckInput,
  adapter: Asking,
  password: string,
  secretMac: string,
  deps: EffectDeps,
  answers: Answers,
): Promise<CheckResult> {
  const result = await ask({ ...input, memo: null }, adapter, password, deps, answers);
  switch (result.event.type) {
    case 'HELD':
      return { event: { type: 'HELD', secretMac }, deep: result.deep };
    case 'NOT_HELD':
      return rotated({ deep: result.deep });
    default:
      return result;
  }
}

/**
 * Whether every node that does not hold the consumer (`node`: those named, else all of them) began holding none of its
 * logins after the consumer was last asked (`since`, the check memo's time): a loss the backend's forgetting explains.
 * Unknown (no memo, no incarnations, a node never read) is not.
 */
function forgotSince(adapter: Adapter, node: string | undefined, since: number | undefined): boolean {
  const incarnations = since === undefined ? undefined : adapter.incarnations?.();
  if (since === undefined || incarnations === undefined) return false;
  const nodes = node === undefined ? [...incarnations.keys()] : node.split(', ');
  return nodes.length > 0 && nodes.every((n) => (incarnations.get(n)?.forgotAt ?? -Infinity) > since);
}

/** An adapter whose backend can be asked whether it holds a grant. */
type Asking = Adapter & Required<Pick<Adapter, 'holds'>>;

function asks(adapter: Adapter): adapter is Asking {
  return adapter.holds !== undefined;
}

/**
 * A check the backend answers: light when it may be, deep (rules compared) when due or to confirm a light one that did
 * not pass.
 */
async function ask(
  { key, provider, spec, appliedAt, memo }: CheckInput,
  adapter: Asking,
  password: string,
  deps: EffectDeps,
  answers: Answers,
  first?: 'light first',
): Promise<CheckResult> {
  const name = provider.config.name;
  const now = deps.now().getTime();
  // past `rotationOverlap`, before the deep check that ends it: kept or cut over on evidence
  const verdict = afterOverlap(appliedAt, memo, provider, now)
    ? await (deps.overlap?.verdict(provider, key, spec.login, now) ?? NO_VERDICT)
    : NO_VERDICT;
  const overlapping = inOverlap(appliedAt, provider, now) || verdict.kind === 'held';
  const grant: Grant = {
    login: spec.login,
    password,
    values: spec.values,
    ...(overlapping ? { keepPasswords: true } : {}),
  };
  // made only when something is to be said: a routine check that passes says nothing
  const scrub = () => deps.scrubber.with(password);
  const limit = answers.deadline(provider);
  try {
    // an overlap kept on evidence is checked lightly: the deep check that ends it is still to come
    const held = verdict.kind === 'held';
    const light = first === 'light first' || held || !deepCheckDue(key, appliedAt, memo, provider, now);
    if (adapter.authenticates && light) {
      // a light check that does not pass, for whatever reason, is confirmed by a deep one
      if (await adapter.authenticates(grant, limit).catch(() => false)) {
        await answers.answered(name);
        return { event: { type: 'HELD' }, deep: false };
      }
    }
    const answer = await answers.batchOf(provider).holds(grant, limit);
    await answers.answered(name);
    if (answer.held) return { event: { type: 'HELD' }, deep: !held };
    if (
      answer.reason === 'password-differs' &&
      provider.config.rotationOverlapMs !== undefined &&
      !overlapping &&
      appliedAt !== null
    ) {
      // held but for passwords kept beside the grant's: what an overlap kept, now over
      if ((await adapter.holds({ ...grant, keepPasswords: true }, limit)).held)
        return await cutOver(key, provider, verdict, deps, now);
    }
    const detail = scrub().scrub(answer.detail);
    return {
      event:
        provider.config.management === 'observe'
          ? { type: 'NOT_APPLIED', reason: answer.reason, detail }
          : {
              type: 'NOT_HELD',
              reason: answer.reason,
              detail,
              ...(answer.node !== undefined ? { node: answer.node } : {}),
              ...(forgotSince(adapter, answer.node, memo?.at) ? { forgot: true as const } : {}),
            },
      deep: true,
    };
  } catch (error) {
    answers.failed(name);
    const timedOut = isHoldfastError(error, 'DEADLINE_EXCEEDED');
    if (timedOut) {
      await deps.gate.pause(
        name,
        `the check of ${key} timed out after ${provider.config.timing.checkTimeoutMs} ms`,
        deps.now(),
      );
    }
    return { event: { type: 'CHECK_FAILED', error: scrub().describe(error), timedOut }, deep: false };
  } finally {
    limit.done();
  }
}

async function remove({ provider, spec }: EffectInput, deps: EffectDeps, answers: Answers): Promise<ConsumerEvent> {
  if (provider.config.management !== 'manage') return { type: 'REMOVED' }; // the login is left on the backend
  const limit = answers.deadline(provider);
  try {
    await provider.adapter.remove(spec.login, limit, spec.values);
    await answers.answered(provider.config.name);
    return { type: 'REMOVED' };
  } catch (error) {
    const words = deps.scrubber.describe(error);
    return isHoldfastError(error, 'BACKEND_REFUSED')
      ? { type: 'REMOVE_REFUSED', error: words }
      : { type: 'REMOVE_FAILED', error: words };
  } finally {
    limit.done();
  }
}
