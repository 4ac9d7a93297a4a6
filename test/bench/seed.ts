/**
 * Puts a benchmark's world where a holdfast that has run for a while would have left it: every
 * consumer applied on the cache (by the adapter itself), held in its record, its revision and
 * its last check known to the queue's Redis, its last deep check somewhere in the past
 * `deepCheckEvery`. The engine started afterwards re-creates its jobs from the records.
 */
import { MongoClient } from 'mongodb';
import type { ConsumerEvent } from '../../machines/consumer-events.js';
import { createConsumerMachine } from '../../machines/consumer-machine.js';
import {
  firstSnapshot,
  persist,
  step,
  waitEnded,
  type ConsumerSnapshot,
  type PersistedConsumer,
} from '../../machines/machine-step.js';
import { connectAdapter, type HoldfastConfig, type ProviderConfig } from '../../src/config/config.js';
import { createEach } from '../../src/adapters/batch-calls.js';
import { loadContributions } from '../../src/desired/load-contributions.js';
import type { DesiredState } from '../../src/desired/consumer-spec.js';
import { connectCoordination } from '../../src/engine/engine.js';
import type { Coordination } from '../../src/queue/coordination.js';
import { briefOf } from '../../src/queue/brief-of.js';
import { secretFingerprint } from '../../src/secrets/fingerprint.js';
import type { ConsumerRecord } from '../../src/store/consumer-record.js';
import { encodeRecord, type RecordDocument } from '../../src/store/record-codec.js';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import type { BenchEnv } from './bench-env.js';

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
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
 * of it, for a backend of several (`redis-nodes-adapter.ts`); in batches (its `createMany`, many
 * `ACL SETUSER`s per round trip) where it has them. `state`: the contributions, when read already.
 */
export async function applyLogins(env: BenchEnv, provider: ProviderConfig, state?: DesiredState): Promise<void> {
  const adapter = connectAdapter(provider);
  const byKey = new Map(env.consumers.map((c) => [c.key, c]));
  const consumers = (state ?? (await loadContributions(provider))).consumers;
  const grantOf = ({ key, desired }: (typeof consumers)[number]) => ({
    login: desired.login,
    password: byKey.get(key)!.password,
    values: desired.values,
  });
  const options = () => ({ signal: AbortSignal.timeout(120_000) });
  try {
    if (!adapter.createMany) {
      await inParallel(consumers, 64, (c) => adapter.create(grantOf(c), options()));
      return;
    }
    const batching = adapter as typeof adapter & Required<Pick<typeof adapter, 'createMany'>>;
    const slices = Array.from({ length: Math.ceil(consumers.length / 10_000) }, (_, i) =>
      consumers.slice(i * 10_000, (i + 1) * 10_000),
    );
    await inParallel(slices, 2, async (slice) => {
      const failed = (await createEach(batching, slice.map(grantOf), options())).find((each) => !each.ok);
      if (failed) throw new Error(`a seeded login was not created: ${String(failed.ok ? '' : failed.error)}`);
    });
  } finally {
    await adapter.close();
  }
}

type Consumer = DesiredState['consumers'][number];

/**
 * The machine's persisted snapshot of a consumer applied and found held: stepped for real for
 * the first, and for each other the first's with its key, spec hash and secret's fingerprint put
 * in (the snapshot holds nothing else of the consumer). The first few are stepped for real too
 * and compared, so a snapshot that came to hold more fails the seed instead of seeding wrong.
 */
function heldSnapshots(provider: ProviderConfig): (key: string, specHash: string, mac: string) => PersistedConsumer {
  const machine = createConsumerMachine(provider.timing);
  const stepped = (key: string, specHash: string, mac: string) => {
    let snapshot: ConsumerSnapshot = firstSnapshot(machine, key);
    const events: ConsumerEvent[] = [
      { type: 'DESIRED', specHash },
      { type: 'APPLIED', specHash, secretMac: mac },
      waitEnded('verify', 'held'),
      { type: 'HELD' },
    ];
    for (const event of events) snapshot = step(machine, snapshot, event).snapshot;
    return persist(snapshot);
  };
  let template: { text: string; key: string; specHash: string; mac: string } | undefined;
  let checked = 0;
  return (key, specHash, mac) => {
    if (!template) template = { text: JSON.stringify(stepped(key, specHash, mac)), key, specHash, mac };
    const t = template;
    const text = t.text.split(t.key).join(key).split(t.specHash).join(specHash).split(t.mac).join(mac);
    if (checked++ < 5 && text !== JSON.stringify(stepped(key, specHash, mac)))
      throw new Error(`the held snapshot of ${key} is not the template's with its own key, hash and fingerprint`);
    return JSON.parse(text) as PersistedConsumer;
  };
}

/** The records, as the machine would have them after an apply and a check that found it held. */
function heldRecords(
  config: HoldfastConfig,
  passwords: ReadonlyMap<string, string>,
  consumers: readonly Consumer[],
  snapshotOf: ReturnType<typeof heldSnapshots>,
  now: number,
): ConsumerRecord[] {
  const provider = config.providers[0]!;
  const { verifyEveryMs, deepCheckEveryMs } = provider.timing;
  const password = (key: string) => passwords.get(key)!;
  return consumers.map(({ key, id, desired }) => {
    const at = new Date(now - verifyEveryMs);
    // applied an hour ago, deep-checked since: the next deep checks come spread over the hour
    const appliedAt = new Date(now - deepCheckEveryMs);
    return {
      _id: key,
      provider: provider.name,
      consumerId: id,
      desired,
      desiredAt: now - 60_000,
      machine: snapshotOf(key, desired.specHash, secretFingerprint(config.fingerprintKey, password(key))),
      stateSince: at,
      rev: REV,
      appliedAt,
      // due: the sweep at start-up re-creates each as a job, spread over the engine's own interval
      timer: { rev: REV, wait: 'verify', dueAt: at },
      effectUntil: null,
      lastCheck: { at, outcome: 'held', detail: null },
      history: [{ at, from: 'applying', to: 'held', reason: 'applied' }],
      createdAt: at,
      updatedAt: at,
    };
  });
}

/** What the queue's Redis knows of a running engine's consumers: their revisions, last checks and briefs. */
async function noteInQueue(
  coordination: Coordination,
  provider: ProviderConfig,
  records: readonly ConsumerRecord[],
  now: number,
): Promise<void> {
  const { verifyEveryMs, deepCheckEveryMs } = provider.timing;
  await inParallel(records, 500, async (r) => {
    await coordination.locks.rememberRevision(r._id, REV);
    const deepAt = now - Math.random() * deepCheckEveryMs * 0.95;
    await coordination.locks.release(r._id, provider.name, 'seed', {
      at: now - verifyEveryMs,
      outcome: 'held',
      detail: null,
      rev: REV,
      deepAt,
    });
  });
  await coordination.notes.noteBriefs(records.map((r) => [r._id, briefOf(r)]));
}

/**
 * Consumers seeded per chunk: built, inserted and noted in the queue's Redis, then let go (a million records are not
 * held at once).
 */
const CHUNK = 20_000;

/**
 * `phase`, when given, is told each part's name as it ends and the ms it took (logins, then
 * records, store and queue summed over the chunks, then index).
 */
export async function seedHeld(
  env: BenchEnv,
  config: HoldfastConfig,
  phase: (name: string, ms: number) => void = () => undefined,
): Promise<void> {
  const provider = config.providers[0]!;
  const now = Date.now();
  let mark = now;
  const state = await loadContributions(provider);
  phase('contributions', Date.now() - mark);
  mark = Date.now();
  await applyLogins(env, provider, state);
  phase('logins', Date.now() - mark);
  const spent = { records: 0, store: 0, queue: 0 };
  const timed = async <T>(part: keyof typeof spent, work: () => T | Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await work();
    spent[part] += Date.now() - started;
    return result;
  };
  const snapshotOf = heldSnapshots(provider);
  const passwords = new Map(env.consumers.map((c) => [c.key, c.password]));
  const client = new MongoClient(env.store.url);
  const { redis, coordination } = connectCoordination(config);
  try {
    const collection = client.db(config.store.database).collection<RecordDocument>('consumers');
    for (let i = 0; i < state.consumers.length; i += CHUNK) {
      const records = await timed('records', () =>
        heldRecords(config, passwords, state.consumers.slice(i, i + CHUNK), snapshotOf, now),
      );
      const documents = records.map(encodeRecord);
      await timed('store', () =>
        inParallel(
          Array.from({ length: Math.ceil(documents.length / 5000) }, (_, j) =>
            documents.slice(j * 5000, (j + 1) * 5000),
          ),
          2,
          (batch) => collection.insertMany(batch, { ordered: false }),
        ),
      );
      await timed('queue', () => noteInQueue(coordination, provider, records, now));
    }
    await client
      .db(config.store.database)
      .collection('providers')
      .insertOne({
        _id: 'cache' as never,
        contributionsError: null,
        errorSince: null,
        lastGoodAt: new Date(now),
        consumers: state.consumers.length,
      });
  } finally {
    redis.disconnect();
    await client.close();
  }
  for (const [part, ms] of Object.entries(spent)) phase(part, ms);
  mark = Date.now();
  await indexFerretDb(env.store);
  phase('index', Date.now() - mark);
}
