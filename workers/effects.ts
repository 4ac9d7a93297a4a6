/**
 * The effects a consumer machine asks for, performed against the provider's adapter with a
 * deadline. Each returns the event that reports its result. The grant secret is read here,
 * when needed, and everything an effect reports is scrubbed of it.
 */
import type { ConsumerEvent } from '../machines/consumer-events.js';
import type { ConsumerContext } from '../machines/consumer-machine.js';
import { isHoldfastError } from '../src/errors/holdfast-error.js';
import type { Scrubber } from '../src/logging/scrubber.js';
import type { ProviderGate } from '../src/queue/provider-gate.js';
import { secretFingerprint } from '../src/secrets/fingerprint.js';
import { readGrantSecret } from '../src/secrets/grant-secret.js';
import type { ConsumerRecord } from '../src/store/consumer-record.js';
import type { ProviderRuntime } from './provider-runtime.js';

export interface EffectInput {
  key: string;
  provider: ProviderRuntime;
  desired: ConsumerRecord['desired'];
  /** The machine's context as the effect starts. */
  context: ConsumerContext;
}

export type Effect = (input: EffectInput) => Promise<ConsumerEvent>;

export interface Effects {
  apply: Effect;
  check: Effect;
  remove: Effect;
}

export interface EffectDeps {
  fingerprintKey: Buffer;
  gate: ProviderGate;
  scrubber: Scrubber;
  now: () => Date;
}

type SecretOutcome = { password: string } | { event: ConsumerEvent };

async function readSecret(path: string, scrubber: Scrubber): Promise<SecretOutcome> {
  try {
    return { password: await readGrantSecret(path) };
  } catch (error) {
    if (isHoldfastError(error, 'SECRET_MISSING')) return { event: { type: 'SECRET_MISSING', path } };
    if (isHoldfastError(error, 'SECRET_UNREADABLE')) return { event: { type: 'SECRET_UNREADABLE', detail: error.message } };
    return { event: { type: 'APPLY_FAILED', error: scrubber.describe(error) } };
  }
}

function deadline(provider: ProviderRuntime): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(provider.config.timing.checkTimeoutMs) };
}

export function createEffects(deps: EffectDeps): Effects {
  return {
    async apply({ provider, desired }) {
      if (desired.problems.length > 0) return { type: 'REJECT', problems: desired.problems };
      const secret = await readSecret(desired.secretPath, deps.scrubber);
      if ('event' in secret) return secret.event;
      const scrub = deps.scrubber.with(secret.password);
      try {
        await provider.adapter.create({ login: desired.login, password: secret.password, values: desired.values }, deadline(provider));
        await deps.gate.answered(provider.config.name);
        return { type: 'APPLIED', specHash: desired.specHash, secretMac: secretFingerprint(deps.fingerprintKey, secret.password) };
      } catch (error) {
        return { type: 'APPLY_FAILED', error: scrub.describe(error) };
      }
    },

    async check({ key, provider, desired, context }) {
      if (desired.specHash !== context.appliedSpecHash) return { type: 'CHANGED', what: 'spec changed since it was applied' };
      const secret = await readSecret(desired.secretPath, deps.scrubber);
      if ('event' in secret) {
        return secret.event.type === 'APPLY_FAILED' ? { type: 'CHECK_FAILED', error: secret.event.error, timedOut: false } : secret.event;
      }
      if (secretFingerprint(deps.fingerprintKey, secret.password) !== context.appliedSecretMac) {
        return { type: 'CHANGED', what: 'grant secret rotated' };
      }
      const { adapter } = provider;
      if (!adapter.holds) return { type: 'HELD' };
      const name = provider.config.name;
      const admission = await deps.gate.admit(name, provider.config.timing.checkTimeoutMs + 1000);
      if (!admission.admitted) {
        return { type: 'CHECK_FAILED', error: `checks on ${name} are paused since ${admission.pause.since}: ${admission.pause.reason}`, timedOut: false };
      }
      const scrub = deps.scrubber.with(secret.password);
      try {
        const answer = await adapter.holds({ login: desired.login, password: secret.password, values: desired.values }, deadline(provider));
        await deps.gate.answered(name);
        return answer.held ? { type: 'HELD' } : { type: 'NOT_HELD', reason: answer.reason, detail: scrub.scrub(answer.detail) };
      } catch (error) {
        const timedOut = isHoldfastError(error, 'DEADLINE_EXCEEDED');
        if (timedOut) {
          await deps.gate.pause(name, `the check of ${key} timed out after ${provider.config.timing.checkTimeoutMs} ms`, deps.now());
        }
        return { type: 'CHECK_FAILED', error: scrub.describe(error), timedOut };
      }
    },

    async remove({ provider, desired }) {
      try {
        await provider.adapter.remove(desired.login, deadline(provider));
        return { type: 'REMOVED' };
      } catch (error) {
        return { type: 'REMOVE_FAILED', error: deps.scrubber.describe(error) };
      }
    },
  };
}
