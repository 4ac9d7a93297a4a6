/**
 * One provider's plan: the proposed contributions read and judged by the loader
 * (`loadProposed`: the same checks, the policy's included, as `holdfast run`), set against the
 * records, with the desired-state sync's own rules for what it would deliver and whether its
 * mass-removal guard would hold the change back (`desired-change.ts`); then the grant secrets of
 * the consumers kept as they are read (a rotation is their fingerprint changed) and the backend
 * asked, read-only, whether it holds those the records say are held (`deep-checks.ts`: as a
 * routine check asks, light then deep; deep for every one with `--deep`).
 *
 * It writes nothing: it is given a store it can only scan, confirmations it can only read, and an
 * adapter it can only ask (`deep-checks.ts`).
 */
import type { Grant } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import { inRotationOverlap } from '../config/rotation-overlap.js';
import type { DeclaredConsumer } from '../desired/consumer-spec.js';
import { DeclaredBriefs } from '../desired/declared-briefs.js';
import { changeDigest, changesOf, deliveredDigest, removalsHeldBack, shortChange } from '../desired/desired-change.js';
import { loadProposed } from '../desired/load-contributions.js';
import { specDigestBytes } from '../desired/spec-digest.js';
import { isHoldfastError } from '../errors/holdfast-error.js';
import type { Scrubber } from '../logging/scrubber.js';
import { checkSpec } from '../policy/spec-check.js';
import type { RemovalConfirmations } from '../queue/coordination.js';
import { secretFingerprint } from '../secrets/fingerprint.js';
import { readGrantSecret } from '../secrets/grant-secret.js';
import { secretRootsOf } from '../secrets/secret-roots.js';
import type { ConsumerRecord } from '../store/consumer-record.js';
import { consumerIdOf } from '../store/consumer-key.js';
import { checks, mapBounded, type AskingAdapter } from './deep-checks.js';
import type {
  Drifted,
  NotAsked,
  PlannedChange,
  PlannedCreate,
  PlannedRefusal,
  PlannedRemovals,
  ProviderPlan,
} from './plan-report.js';
import { PASSWORD_ROTATION, specDifferences } from './spec-diff.js';

export interface PlanDeps {
  /** The HMAC key of the records' fingerprints; empty when there is none yet (no rotation can be told). */
  fingerprintKey: Buffer;
  confirmations: Pick<RemovalConfirmations, 'confirmedRemovals'>;
  adapter: AskingAdapter;
  scrubber: Scrubber;
  /** How the plan's own command was given its configuration, for the command it names (`-c holdfast.yaml`). */
  configArgs: string;
  /** Every consumer kept is asked the deep check (rules compared), not only those whose light check did not pass. */
  deep: boolean;
  now: () => Date;
}

/** Grant secrets read at once. */
const SECRETS_AT_ONCE = 64;

/** A declared consumer the plan keeps as it is: its record, its declaration, and (once read) its grant secret. */
interface Kept {
  record: ConsumerRecord;
  declared: DeclaredConsumer;
}

/** Whether the record's consumer was ever applied (and is not being removed): else a declaration of it is a create. */
function applied(record: ConsumerRecord | undefined): record is ConsumerRecord {
  return record !== undefined && !record.desired.removed && record.machine.context.appliedSpecHash !== null;
}

/** Why a grant secret cannot be used now, in words (never the secret), or its password. */
async function secretOf(
  provider: ProviderConfig,
  path: string,
  scrubber: Scrubber,
): Promise<{ kind: 'read'; password: string } | { kind: 'unusable'; why: string }> {
  try {
    const password = await readGrantSecret(path, secretRootsOf(provider));
    const refused = provider.adapter.secretProblem?.(password);
    return refused === undefined
      ? { kind: 'read', password }
      : { kind: 'unusable', why: `grant secret ${path} ${refused}` };
  } catch (error) {
    return { kind: 'unusable', why: isHoldfastError(error) ? error.message : scrubber.describe(error) };
  }
}

/** What a run would do with each declared consumer, set against its record. */
function sorted(declared: readonly DeclaredConsumer[], records: ReadonlyMap<string, ConsumerRecord>) {
  const create: Array<PlannedCreate & { secretPath: string }> = [];
  const change: Array<PlannedChange & { secretPath: string }> = [];
  const refused: PlannedRefusal[] = [];
  const kept: Kept[] = [];
  for (const consumer of declared) {
    const { key, desired } = consumer;
    const record = records.get(key);
    if (desired.problems.length > 0) {
      refused.push({ key, problems: desired.problems, keepsAccepted: applied(record) });
    } else if (!applied(record)) {
      create.push({ key, login: desired.login, source: desired.source, notes: [], secretPath: desired.secretPath });
    } else if (desired.specHash !== record.machine.context.appliedSpecHash) {
      const differences = specDifferences(record.desired, desired);
      change.push({
        key,
        login: desired.login,
        source: desired.source,
        differences: differences.length > 0 ? differences : ['the spec is written differently; the same rights'],
        notes: [],
        secretPath: desired.secretPath,
      });
    } else {
      kept.push({ record, declared: consumer });
    }
  }
  return { create, change, refused, kept };
}

/** The removals a run would deliver, and whether the mass-removal guard would hold them back. */
async function removalsOf(
  provider: ProviderConfig,
  declared: readonly DeclaredConsumer[],
  records: ReadonlyMap<string, ConsumerRecord>,
  deps: PlanDeps,
): Promise<PlannedRemovals | null> {
  const briefs = new DeclaredBriefs();
  for (const { key, desired } of declared) briefs.push(key, specDigestBytes(desired));
  const delivered = new Map<string, string>();
  for (const [key, record] of records) {
    const digest = deliveredDigest(record);
    if (digest !== undefined) delivered.set(key, digest);
  }
  const { changed, gone } = changesOf(briefs, delivered);
  if (gone.length === 0) return null;
  const heldBack = removalsHeldBack(provider, gone.length, delivered.size);
  const change = changeDigest(briefs, changed, gone);
  const given = heldBack ? await deps.confirmations.confirmedRemovals(provider.name) : null;
  // a sealed confirmation of this very change (when it was held back is the sync's to check)
  const confirmed = given !== null && given !== 'unsealed' && given.change === change;
  const { share, floor } = provider.removalGuard;
  return {
    consumers: gone.sort().map((key) => ({ key, login: records.get(key)?.desired.login ?? '' })),
    of: delivered.size,
    heldBack,
    confirmed,
    guard: `at most ${Math.round(share * 100)}% of the consumers, or ${floor}, removed at once without a person's confirmation`,
    ...(heldBack ? { change: shortChange(change) } : {}),
    ...(heldBack && !confirmed
      ? { confirmWith: `holdfast confirm-removals ${provider.name} --change ${shortChange(change)}${deps.configArgs}` }
      : {}),
    leavesLogins: provider.management !== 'manage',
  };
}

/** The notes of a consumer to create or change whose grant secret cannot be used yet. */
async function noteSecrets(
  provider: ProviderConfig,
  entries: Array<{ notes: string[]; secretPath: string }>,
  deps: PlanDeps,
): Promise<void> {
  await mapBounded(entries, SECRETS_AT_ONCE, async (entry) => {
    const secret = await secretOf(provider, entry.secretPath, deps.scrubber);
    if (secret.kind === 'unusable')
      entry.notes.push(`${secret.why}: it would wait (missing) or be blocked until it can be read`);
  });
}

/**
 * The consumers kept as they are: a grant secret whose fingerprint changed is a rotation (a
 * change); those the record says are held are asked, deeply, whether the backend holds them.
 */
async function askKept(
  provider: ProviderConfig,
  kept: readonly Kept[],
  deps: PlanDeps,
): Promise<{ rotated: PlannedChange[]; drifted: Drifted[]; notAsked: NotAsked[]; unchanged: number }> {
  const rotated: PlannedChange[] = [];
  const notAsked: NotAsked[] = [];
  const asking: Array<{ kept: Kept; grant: Grant }> = [];
  const now = deps.now().getTime();
  await mapBounded(kept, SECRETS_AT_ONCE, async (one) => {
    const { record, declared } = one;
    const secret = await secretOf(provider, record.desired.secretPath, deps.scrubber);
    if (secret.kind === 'unusable')
      return void notAsked.push({ key: record._id, why: `its grant secret cannot be used: ${secret.why}` });
    const mac = record.machine.context.appliedSecretMac;
    if (
      deps.fingerprintKey.length > 0 &&
      mac !== null &&
      secretFingerprint(deps.fingerprintKey, secret.password) !== mac
    ) {
      return void rotated.push({
        key: record._id,
        login: record.desired.login,
        source: declared.desired.source,
        differences: [PASSWORD_ROTATION],
        notes: [],
      });
    }
    if (record.machine.state !== 'held') return;
    // the values as the worker's policy check parses them before it acts
    const { values, problems } = checkSpec(provider, {
      id: consumerIdOf(record._id),
      login: record.desired.login,
      values: record.desired.values,
      secretPath: record.desired.secretPath,
    });
    if (problems.length > 0) return;
    const overlapping = inRotationOverlap(record.appliedAt?.getTime() ?? null, provider.rotationOverlapMs, now);
    asking.push({
      kept: one,
      grant: {
        login: record.desired.login,
        password: secret.password,
        values,
        ...(overlapping ? { keepPasswords: true } : {}),
      },
    });
  });
  const answers = await checks(
    deps.adapter,
    asking.map((a) => a.grant),
    provider.timing.checkTimeoutMs,
    deps.deep,
  );
  const drifted: Drifted[] = [];
  answers.forEach((answer, i) => {
    const { kept: one, grant } = asking[i]!;
    const key = one.record._id;
    const scrubber = deps.scrubber.with(grant.password);
    if (!answer.ok)
      return void notAsked.push({ key, why: `could not ask ${provider.name}: ${scrubber.describe(answer.error)}` });
    if (answer.value.held) return;
    const { reason, detail, node } = answer.value;
    drifted.push({
      key,
      login: grant.login,
      reason,
      detail: scrubber.scrub(detail),
      ...(node !== undefined ? { node } : {}),
    });
  });
  return { rotated, drifted, notAsked, unchanged: kept.length - rotated.length - drifted.length - notAsked.length };
}

/** A contributions file as the loader read it: its consumers, or every problem that refuses it whole. */
export type ReadProposal = { kind: 'read'; consumers: DeclaredConsumer[] } | { kind: 'invalid'; invalid: string[] };

/** The contributions in `file`, read and judged as `provider`'s (`loadProposed`). */
export async function readProposal(provider: ProviderConfig, file: string): Promise<ReadProposal> {
  try {
    return { kind: 'read', consumers: (await loadProposed(provider, file)).consumers };
  } catch (error) {
    if (!isHoldfastError(error, 'CONTRIBUTIONS_INVALID', 'CONTRIBUTIONS_BEYOND_BOUNDS')) throw error;
    return { kind: 'invalid', invalid: error.problems.length > 0 ? [...error.problems] : [error.message] };
  }
}

/** The plan of `provider`, for the contributions read from `file`, against its `records`. */
export async function planProvider(
  provider: ProviderConfig,
  file: string,
  read: ReadProposal,
  records: ReadonlyMap<string, ConsumerRecord>,
  unreadable: number,
  deps: PlanDeps,
): Promise<ProviderPlan> {
  const plan: ProviderPlan = {
    provider: provider.name,
    adapter: provider.adapter.kind,
    management: provider.management,
    file,
    invalid: null,
    create: [],
    change: [],
    remove: null,
    refused: [],
    drifted: [],
    notAsked: [],
    unchanged: 0,
    unreadable,
  };
  // bad input never deletes: nothing of it would be delivered
  if (read.kind === 'invalid') return { ...plan, invalid: read.invalid };
  const declared = read.consumers;
  const { create, change, refused, kept } = sorted(declared, records);
  await noteSecrets(provider, [...create, ...change], deps);
  const { rotated, drifted, notAsked, unchanged } = await askKept(provider, kept, deps);
  plan.create = create.map(({ key, login, source, notes }) => ({ key, login, source, notes }));
  plan.change = [
    ...change.map(({ key, login, source, differences, notes }) => ({ key, login, source, differences, notes })),
    ...rotated,
  ].sort((a, b) => (a.key < b.key ? -1 : 1));
  plan.refused = refused;
  plan.remove = await removalsOf(provider, declared, records, deps);
  return { ...plan, drifted, notAsked, unchanged };
}
