/**
 * `npx tsx test/bench/heal-calls.ts [consumers] [--rounds N] [--cpu-prof <file>]`: what one heal of a `redis-acl`
 * consumer costs in the effects and the adapter alone (no queue, store or machine): the light check that fails, the
 * deep check that finds the login missing, the apply, and the confirmation, as `workers/effects.ts` performs them for
 * a heal, every consumer at once (their calls batched as the engine's are). Starts its own redis-server, applies
 * `consumers` logins (default 2,000; README's rules, grant secrets in files), then, `--rounds` times (default 3):
 * the cache restarted empty, and every consumer healed. Reports per heal: holdfast's CPU (µs; at the end the
 * least and the median of the rounds after the first, which warms the code up) and the cache's commands (`INFO
 * commandstats`, `INFO` itself left out). Runs against any revision whose `createEffects` has `check`, `apply` and `confirm`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import type { ConsumerContext } from '../../machines/consumer-machine.js';
import { redisAcl } from '../../src/adapters/redis-acl/index.js';
import { Scrubber } from '../../src/logging/scrubber.js';
import { secretFingerprint } from '../../src/secrets/fingerprint.js';
import { createEffects, type CheckInput } from '../../workers/effects.js';
import type { ProviderGate } from '../../workers/provider-gate.js';
import { providerRuntime } from '../../workers/provider-runtime.js';
import { startOwned } from '../backends/provision.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';
import type { OwnedBackend } from '../backends/types.js';
import { providerConfig } from '../support/provider-config.js';
import { costBetween, redisCost } from './measure.js';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const CONSUMERS = Number(process.argv[2] !== undefined && !process.argv[2].startsWith('--') ? process.argv[2] : 2000);
const ROUNDS = Number(arg('rounds') ?? 3);
const PROFILE = arg('cpu-prof');
const say = (text: string) => process.stdout.write(`${text}\n`);

const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
let server: OwnedBackend | undefined;
try {
  server = await startOwned('redis', run, settings, false);
  const b = server;
  const admin = new Redis(b.url, { maxRetriesPerRequest: null });
  const dir = join(run.root, 'secrets');
  mkdirSync(dir, { recursive: true });
  const config = providerConfig({
    adapter: redisAcl,
    contributionsPath: join(dir, 'contributions.yaml'),
    admin: { url: `redis://${b.host}:${b.port}`, username: b.admin.username, password: b.admin.password },
    policy: redisAcl.policySchema.parse({ allowedCommands: ['+@read', '+@write', '+@connection'] }),
  });
  const provider = providerRuntime(config);
  const gate = {
    admit: () => Promise.resolve({ admitted: true, probe: false }),
    answered: () => Promise.resolve(false),
    pause: () => Promise.resolve(true),
  } as unknown as ProviderGate;
  const fingerprintKey = randomBytes(32);
  const effects = createEffects({ fingerprintKey, gate, scrubber: new Scrubber(), now: () => new Date() });
  const inputs: CheckInput[] = Array.from({ length: CONSUMERS }, (_, i) => {
    const password = randomBytes(12).toString('hex');
    const secretPath = join(dir, `c${i}.secret`);
    writeFileSync(secretPath, `${password}\n`, { mode: 0o600 });
    const now = Date.now();
    return {
      key: `cache/c${i}`,
      provider,
      spec: {
        login: `heal_${i}`,
        values: { keys: [`c${i}:*`], channels: [], commands: ['+@read', '+@write', '+@connection'] },
        secretPath,
        specHash: 'h1',
      },
      context: {
        appliedSpecHash: 'h1',
        appliedSecretMac: secretFingerprint(fingerprintKey, password),
        reapplying: false,
      } as unknown as ConsumerContext,
      appliedAt: now - 60_000,
      memo: { at: now, outcome: 'held', detail: null, rev: 1, deepAt: now, secretMac: undefined } as CheckInput['memo'],
    };
  });
  // first applies: every login made and held
  const firsts = await Promise.all(
    inputs.map(async (input) => {
      const secret = await effects.secretFor(input.spec, provider);
      if (secret.kind !== 'read') throw new Error('the secret could not be read');
      return effects.apply({ ...input, password: secret.password });
    }),
  );
  if (firsts.some((e) => e.type !== 'APPLIED')) throw new Error(`first apply: ${JSON.stringify(firsts[0])}`);

  /** One heal as the engine performs it: the check, the apply with the secret it read, the confirmation. */
  const heal = async (input: CheckInput): Promise<string> => {
    const found = await effects.check(input);
    if (found.event.type !== 'NOT_HELD' || found.secret === undefined) return `check: ${found.event.type}`;
    const password = found.secret();
    const applied = await effects.apply({
      ...input,
      password,
      ...(found.secretMac ? { secretMac: found.secretMac } : {}),
    });
    if (applied.type !== 'APPLIED') return `apply: ${applied.type}`;
    const confirmed = await effects.confirm(input, password, found.event.reason);
    return confirmed.event.type === 'HELD' ? 'healed' : `confirm: ${confirmed.event.type}`;
  };

  const session = PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  say(`heal calls: ${CONSUMERS} consumers, ${ROUNDS} rounds`);
  say('round  holdfast CPU µs/heal  wall ms  cache commands per heal');
  const cpuPerHeal: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    // the incident: the cache restarted empty (no ACL file); measured once both the adapter's connections are back
    await b.restart();
    await admin.ping().catch(() => undefined);
    const probe = inputs[0]!;
    for (let tries = 0; ; tries += 1) {
      const ok = await provider.adapter.ping!({ signal: AbortSignal.timeout(1_000) })
        .then(() =>
          provider.adapter.authenticates?.(
            { login: 'nobody', password: 'x'.repeat(12), values: probe.spec.values },
            { signal: AbortSignal.timeout(1_000) },
          ),
        )
        .then(
          () => true,
          () => false,
        );
      if (ok) break;
      if (tries > 100) throw new Error('the cache did not come back');
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = await redisCost(admin);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const outcomes = await Promise.all(inputs.map(heal));
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const cost = costBetween(before, await redisCost(admin));
    const bad = outcomes.filter((o) => o !== 'healed');
    if (bad.length > 0) throw new Error(`${bad.length} not healed, the first: ${bad[0]}`);
    const perHeal = (used.user + used.system) / CONSUMERS;
    cpuPerHeal.push(perHeal);
    const calls = [...cost.calls]
      .filter(([name, n]) => n > 0 && name !== 'info')
      .map(([name, n]) => `${name} ×${(n / CONSUMERS).toFixed(2)}`)
      .join(', ');
    const total = [...cost.calls].filter(([name]) => name !== 'info').reduce((s, [, n]) => s + n, 0) / CONSUMERS;
    say(
      `${String(round).padStart(5)}  ${perHeal.toFixed(1).padStart(20)}  ${wallMs.toFixed(0).padStart(7)}  ${total.toFixed(2)}: ${calls}`,
    );
  }
  if (session && PROFILE) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(PROFILE, JSON.stringify(profile));
    say(`CPU profile: ${PROFILE}`);
  }
  // the first round warms the code up: left out
  const warm = cpuPerHeal.slice(1).sort((x, y) => x - y);
  const median = warm[Math.floor(warm.length / 2)];
  say(JSON.stringify({ consumers: CONSUMERS, rounds: ROUNDS, cpuUsPerHeal: { min: warm[0], median } }));
  admin.disconnect();
  await provider.adapter.close();
} finally {
  await server?.stop();
  await reapRunDir(run);
}
