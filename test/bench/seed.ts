/**
 * Puts a benchmark's world where a holdfast that has run for a while would have left it: every
 * consumer applied on the cache (by the adapter itself), held in its record, its revision and
 * its last check known to the queue's Redis, its last deep check somewhere in the past
 * `deepCheckEvery`. The engine started afterwards re-creates its jobs from the records.
 */
import { MongoClient } from 'mongodb';
import type { ConsumerEvent } from '../../machines/consumer-events.js';
import { createConsumerMachine } from '../../machines/consumer-machine.js';
import { firstSnapshot, persist, step, waitEnded, type ConsumerSnapshot } from '../../machines/machine-step.js';
import { connectAdapter, type HoldfastConfig, type ProviderConfig } from '../../src/config/config.js';
import { loadContributions } from '../../src/desired/load-contributions.js';
import { connectCoordination } from '../../src/engine/engine.js';
import { summaryOf } from '../../src/queue/summarize.js';
import { secretFingerprint } from '../../src/secrets/fingerprint.js';
import type { ConsumerRecord } from '../../src/store/consumer-record.js';
import { encodeRecord, type RecordDocument } from '../../src/store/record-codec.js';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import type { BenchEnv } from './bench-env.js';

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

const REV = 3;

/**
 * Every consumer's login applied on the provider's backend by the adapter itself: on every node
 * of it, for a backend of several (`redis-nodes-adapter.ts`).
 */
export async function applyLogins(env: BenchEnv, provider: ProviderConfig): Promise<void> {
  const adapter = connectAdapter(provider);
  const byKey = new Map(env.consumers.map((c) => [c.key, c]));
  const state = await loadContributions(provider);
  try {
    await inParallel(state.consumers, 64, ({ key, desired }) =>
      adapter.create({ login: desired.login, password: byKey.get(key)!.password, values: desired.values }, { signal: AbortSignal.timeout(30_000) }),
    );
  } finally {
    await adapter.close();
  }
}

export async function seedHeld(env: BenchEnv, config: HoldfastConfig): Promise<void> {
  const provider = config.providers[0]!;
  const machine = createConsumerMachine(provider.timing);
  const byKey = new Map(env.consumers.map((c) => [c.key, c]));
  const state = await loadContributions(provider);
  const now = Date.now();
  const { verifyEveryMs, deepCheckEveryMs } = provider.timing;

  await applyLogins(env, provider);

  // the records, as the machine would have them after an apply and a check that found it held
  const records: ConsumerRecord[] = state.consumers.map(({ key, id, desired }) => {
    const mac = secretFingerprint(config.fingerprintKey, byKey.get(key)!.password);
    let snapshot: ConsumerSnapshot = firstSnapshot(machine, key);
    const events: ConsumerEvent[] = [{ type: 'DESIRED', specHash: desired.specHash }, { type: 'APPLIED', specHash: desired.specHash, secretMac: mac }];
    for (const event of [...events, waitEnded('verify', 'held'), { type: 'HELD' } as const]) snapshot = step(machine, snapshot, event).snapshot;
    const at = new Date(now - verifyEveryMs);
    // applied an hour ago, deep-checked since: the next deep checks come spread over the hour
    const appliedAt = new Date(now - deepCheckEveryMs);
    return {
      _id: key,
      provider: provider.name,
      consumerId: id,
      desired,
      desiredAt: now - 60_000,
      machine: persist(snapshot),
      stateSince: at,
      rev: REV,
      appliedAt,
      // due: the sweep at start-up re-creates each as a job, spread over the engine's own interval
      timer: { epoch: REV, wait: 'verify', dueAt: at },
      effectUntil: null,
      lastCheck: { at, outcome: 'held', detail: null },
      history: [{ at, from: 'applying', to: 'held', reason: 'applied' }],
      createdAt: at,
      updatedAt: at,
    };
  });
  const client = new MongoClient(env.store.url);
  try {
    const collection = client.db(config.store.database).collection<RecordDocument>('consumers');
    for (let i = 0; i < records.length; i += 1000) await collection.insertMany(records.slice(i, i + 1000).map(encodeRecord));
    await client.db(config.store.database).collection('providers').insertOne({ _id: 'cache' as never, contributionsError: null, errorSince: null, lastGoodAt: new Date(now), consumers: records.length });
  } finally {
    await client.close();
  }
  await indexFerretDb(env.store);

  // what the queue's Redis knows of a running engine's consumers
  const { redis, coordination } = connectCoordination(config);
  try {
    await inParallel(records, 500, async (r) => {
      await coordination.rememberRevision(r._id, REV);
      const deepAt = now - Math.random() * deepCheckEveryMs * 0.95;
      await coordination.release(r._id, provider.name, 'seed', { at: now - verifyEveryMs, outcome: 'held', detail: null, epoch: REV, deepAt });
    });
    await coordination.noteSummaries(records.map((r) => [r._id, summaryOf(r)]));
  } finally {
    redis.disconnect();
  }
}
