/**
 * `npx tsx test/bench/store-batch-cost.ts [records]`: what one record costs the store (FerretDB
 * indexed, where no Docker runs) by the shape of the round trip: `findOne`/`updateOne` alone,
 * `bulkWrite` of updates in bulks of 32 and 64 (alone, and with 1, 4 or 32 `findOne`s in
 * flight beside them, as in a heal), and `insertMany` in batches of 32, 256 and 1,000. Records are
 * shaped as holdfast writes them (`encodeRecord`). The floor under any heal or first apply that
 * writes a record per consumer.
 */
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';
import { CHART } from '../../machines/consumer-machine.js';
import { firstSnapshot, persist } from '../../machines/machine-step.js';
import { encodeRecord } from '../../src/store/record-codec.js';
import { startOwned, useDocker } from '../backends/provision.js';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';

const n = Number(process.argv[2] ?? 10000);
const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const store = await startOwned('mongodb', run, settings, await useDocker(settings));
const client = new MongoClient(store.url);
const say = (text: string) => process.stdout.write(`${text}\n`);
const idOf = (i: number, tag: string) => `${tag}/c${String(i).padStart(6, '0')}`;
function doc(i: number, tag: string) {
  const key = idOf(i, tag);
  const at = new Date();
  return encodeRecord({
    _id: key,
    provider: 'cache',
    consumerId: key,
    desiredAt: at.getTime(),
    stateSince: at,
    rev: 3,
    appliedAt: at,
    effectUntil: null,
    createdAt: at,
    updatedAt: at,
    desired: {
      login: `hf_${key}`,
      values: { keys: [`c${i}:*`], channels: [], commands: ['+@read', '+@write', '+@connection'] },
      secretPath: `/grants/c${i}.secret`,
      specHash: 'x'.repeat(64),
      source: 'cache.yaml:12',
      removed: false,
      problems: [],
    },
    machine: persist(firstSnapshot(CHART, key)),
    timer: { rev: 3, wait: 'verify', dueAt: at },
    lastCheck: { at, outcome: 'held', detail: null },
    history: [{ at, from: 'applying', to: 'held', reason: 'applied' }],
  });
}
try {
  const db = client.db('holdfast');
  await db.createCollection('consumers');
  const records = db.collection('consumers');
  for (let i = 0; i < n; i += 1000)
    await records.insertMany(Array.from({ length: Math.min(1000, n - i) }, (_, j) => doc(i + j, 'base')) as never[]);
  await indexFerretDb(store);
  const time = async (what: string, count: number, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    const ms = performance.now() - started;
    say(
      `${what.padEnd(52)} ${(ms / count).toFixed(2)} ms/record (${count} in ${Math.round(ms)} ms); load ${loadavg()[0]!.toFixed(2)}`,
    );
  };
  const ids = Array.from({ length: n }, (_, i) => idOf(i, 'base'));
  let rev = 10;
  const bulk = (from: number, size: number) =>
    records.bulkWrite(
      ids.slice(from, from + size).map((id) => ({
        updateOne: { filter: { _id: id }, update: { $set: { rev: rev++, effectUntil: new Date() } } },
      })) as never[],
      { ordered: false },
    );
  await time('findOne by _id, one at a time', 500, async () => {
    for (const id of ids.slice(0, 500)) await records.findOne({ _id: id as never });
  });
  await time('findOne by _id, 32 in flight', 2000, () =>
    Promise.all(
      Array.from({ length: 32 }, async (_, w) => {
        for (let i = w; i < 2000; i += 32) await records.findOne({ _id: ids[i] as never });
      }),
    ),
  );
  await time('updateOne by _id, one at a time', 500, async () => {
    for (const id of ids.slice(0, 500)) await records.updateOne({ _id: id as never }, { $set: { rev: rev++ } });
  });
  for (const size of [32, 64]) {
    await time(`bulkWrite updateOne × ${size}, 20 bulks`, 20 * size, async () => {
      for (let b = 0; b < 20; b++) await bulk(b * size, size);
    });
    for (const beside of [1, 4, 32]) {
      let reading = true;
      let reads = 0;
      const readers = Array.from({ length: beside }, async (_, w) => {
        for (let i = w; reading; i += beside, reads++) await records.findOne({ _id: ids[(i * 7) % n] as never });
      });
      const started = performance.now();
      await time(`bulkWrite updateOne × ${size}, 20 bulks, ${beside} findOne beside`, 20 * size, async () => {
        for (let b = 0; b < 20; b++) await bulk(b * size, size);
      });
      const seconds = (performance.now() - started) / 1000;
      reading = false;
      await Promise.all(readers);
      say(`${''.padEnd(52)} beside them: ${Math.round(reads / seconds)} findOne/s`);
    }
  }
  for (const size of [32, 256, 1000]) {
    await time(`insertMany × ${size}`, size, () =>
      records.insertMany(Array.from({ length: size }, (_, i) => doc(i, `many${size}`)) as never[], { ordered: false }),
    );
  }
} finally {
  await client.close();
  await store.stop();
  await reapRunDir(run);
}
