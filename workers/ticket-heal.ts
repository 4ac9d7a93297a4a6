/**
 * When a heal needs no record, and what it applies (rule 3 of docs/architecture.md, the record is durable: a heal that restores what the
 * record says was applied is an event, not a write). The run (`consumer-run.ts`) asks this when a
 * step on a wait's ticket asks for an apply; anything this refuses is applied on the record,
 * written first, as every change is.
 */
import { STATE_MEANINGS } from '../machines/consumer-health.js';
import type { ConsumerSnapshot, PersistedConsumer } from '../machines/machine-step.js';
import type { CheckResult, EffectInput, Effects, SecretOutcome } from './effects.js';
import type { ProviderRuntime } from './provider-runtime.js';
import { guardSpec, type Verdict } from './spec-guard.js';
import type { WaitJob } from './wait-job.js';

/** A heal's apply: its input and the grant secret it is given (never kept beyond the run). */
export interface TicketHeal {
  input: EffectInput;
  password: string;
  /** The password's keyed fingerprint: the one the record says was applied. */
  secretMac: string;
}

/**
 * Whether a heal on the ticket may go without the record: a served consumer its check found not held, its brake not
 * engaged, on a provider that manages its logins, with the spec the ticket says was applied.
 */
export function healsQuietly(
  provider: ProviderRuntime,
  job: WaitJob,
  from: PersistedConsumer,
  found: CheckResult | undefined,
): boolean {
  return (
    provider.config.management === 'manage' &&
    found?.event.type === 'NOT_HELD' &&
    STATE_MEANINGS[from.state].healthy &&
    from.context.brakeCount === 0 &&
    job.ticket.spec.specHash === from.context.appliedSpecHash
  );
}

/** The policy's verdict on a frozen ticket's spec, per provider configuration: the same for the same two (it is pure). */
const verdicts = new WeakMap<object, { config: ProviderRuntime['config']; key: string; verdict: Verdict }>();

/**
 * The spec guarded as every apply's is (`spec-guard.ts`); for a wait taken again with the same text (the same frozen
 * job: `src/schedule/known-waits.ts`), judged once per provider configuration rather than at every heal (the values'
 * schema parsed again for each of 10,000 consumers of a cache that forgot them was a tenth of the heal's CPU).
 */
function guardedOnTicket(provider: ProviderRuntime, job: WaitJob): Verdict {
  const { spec } = job.ticket;
  if (!Object.isFrozen(spec)) return guardSpec(provider, job.key, spec, 'apply');
  const kept = verdicts.get(spec);
  if (kept !== undefined && kept.config === provider.config && kept.key === job.key) return kept.verdict;
  const verdict = guardSpec(provider, job.key, spec, 'apply');
  verdicts.set(spec, { config: provider.config, key: job.key, verdict });
  return verdict;
}

/**
 * What a heal on the ticket applies: the spec as the provider's configuration allows it now, and the grant secret the
 * check read (else read now) while it is still the one applied; else why not, in words.
 */
export async function healOf(
  provider: ProviderRuntime,
  effects: Effects,
  job: WaitJob,
  found: CheckResult | undefined,
  lost: Pick<ConsumerSnapshot, 'context'>,
): Promise<TicketHeal | string> {
  const spec = job.ticket.spec;
  const verdict = guardedOnTicket(provider, job);
  if (verdict.kind === 'refused') return 'its spec is not what the provider configuration gives now';
  const read = found?.secret;
  const secret: SecretOutcome = read ? { kind: 'read', password: read() } : await effects.secretFor(spec, provider);
  if (secret.kind === 'unusable') return `its grant secret cannot be used (${secret.event.type})`;
  // a rotation (or a changed spec) changes what is applied: written first, on the record; the check that read the
  // secret fingerprinted it already
  const applied = lost.context.appliedSecretMac;
  const known = read && found.secretMac !== undefined;
  if (known ? found.secretMac !== applied : !effects.isApplied(secret.password, lost.context))
    return 'its grant secret rotated since it was applied';
  const input = { key: job.key, provider, spec: { ...spec, values: verdict.values }, context: lost.context };
  return { input, password: secret.password, secretMac: applied! };
}
