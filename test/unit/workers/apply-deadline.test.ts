/**
 * An apply whose deadline passes (a backend slow under load) is a failed apply like any other, retried on its backoff,
 * and says so as a kind: its event is `timedOut`, and the warning the chart says of it carries `timedOut: true` beside
 * its words, so that a reader (a test, a log query) tells a retry under load from a defect without reading the text.
 */
import { describe, expect, it } from 'vitest';
import type { Adapter, CallOptions } from '../../../src/adapters/adapter.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { DEFAULT_TIMING } from '../../../src/config/load-config.js';
import { HoldfastError } from '../../../src/errors/holdfast-error.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import type { ConsumerContext } from '../../../machines/consumer-machine.js';
import { createConsumerMachine } from '../../../machines/consumer-machine.js';
import type { ConsumerEvent } from '../../../machines/consumer-events.js';
import { firstSnapshot, step } from '../../../machines/machine-step.js';
import { createEffects } from '../../../workers/effects.js';
import type { ProviderGate } from '../../../workers/provider-gate.js';
import { providerRuntime } from '../../../workers/provider-runtime.js';
import { providerConfig } from '../../support/provider-config.js';

/** A backend whose `create` answers as `answer` says: never (until its deadline aborts it), or with an error. */
function backend(answer: 'never' | Error): Adapter {
  const create = (_grant: unknown, { signal }: CallOptions) =>
    new Promise<void>((_, reject) => {
      if (answer !== 'never') return reject(answer);
      // as every adapter does (`adapter.ts`): the signal aborts, the call rejects with DEADLINE_EXCEEDED
      signal.addEventListener('abort', () =>
        reject(new HoldfastError('DEADLINE_EXCEEDED', 'test: PutUserPolicy did not finish before its deadline')),
      );
    });
  const none = () => Promise.resolve();
  return { create, remove: none, close: none };
}

async function applied(adapter: Adapter): Promise<ConsumerEvent> {
  const config = providerConfig({
    adapter: redisAcl,
    contributionsPath: '/tmp/contributions.yaml',
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read'] }),
    timing: { ...DEFAULT_TIMING, checkTimeoutMs: 20 },
  });
  const effects = createEffects({
    fingerprintKey: Buffer.alloc(32, 9),
    gate: {} as ProviderGate,
    scrubber: new Scrubber(),
    now: () => new Date(),
  });
  return effects.apply({
    key: 'cache/photos',
    provider: providerRuntime(config, adapter),
    spec: {
      login: 'app_photos',
      values: { keys: ['photos:*'], channels: [], commands: ['+@read'] },
      secretPath: '/unused',
      specHash: 'h1',
    },
    context: { appliedSecretMac: null } as ConsumerContext,
    password: 'a-grant-secret-long-enough',
  });
}

/** What the chart says as a first apply ends with `failed`. */
function saidOf(failed: ConsumerEvent) {
  const machine = createConsumerMachine(DEFAULT_TIMING);
  const applying = step(machine, firstSnapshot(machine, 'cache/photos'), { type: 'DESIRED', specHash: 'h1' });
  return step(machine, applying.snapshot, failed).said;
}

describe('an apply whose deadline passes', () => {
  it('is a failed apply that says it timed out, as a field beside its words', async () => {
    const event = await applied(backend('never'));
    expect(event).toMatchObject({ type: 'APPLY_FAILED', timedOut: true });
    expect(saidOf(event)).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(
          /^apply failed \(test: PutUserPolicy did not finish before its deadline\)/,
        ) as unknown,
        fields: { timedOut: true },
      },
    ]);
  });

  it('any other failure says no such field: a reader that tolerates retries under load still sees it', async () => {
    const event = await applied(backend(new HoldfastError('BACKEND_UNAVAILABLE', 'test: connection refused')));
    expect(event).toEqual({ type: 'APPLY_FAILED', error: 'test: connection refused' });
    const said = saidOf(event);
    expect(said).toEqual([{ level: 'warn', message: expect.stringMatching(/^apply failed/) as unknown }]);
    expect(said[0]).not.toHaveProperty('fields');
  });
});
