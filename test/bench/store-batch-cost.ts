/**
 * `npx tsx test/bench/store-batch-cost.ts [records]`: what one record costs the store (FerretDB
 * indexed, where no Docker runs) by the shape of the round trip: `findOne`/`updateOne` alone, and
 * `bulkWrite` of updates and `insertMany` in batches of 32, 256 and 1,000. The floor under any
 * heal or first apply that writes a record per consumer.
 */
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';
import { startOwned, useDocker } from '../backends/provision.js';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import { createRunDir, reapRunDir } from '../backends/run-dir.js';
import { readSettings } from '../backends/settings.js';

const n = Number(process.argv[2] ?? 5000);
const settings = readSettings();
const run = createRunDir(settings.tmpRoot);
const store = await startOwned('mongodb', run, settings, await useDocker(settings));
const client = new MongoClient(store.url);
const say = (text: string) => process.stdout.write(`${text}\n`);
const doc = (i: number, tag: string) => ({ _id: `${tag}/c${String(i).padStart(6, '0')}`, provider: 'cache', machine: { state: 'held', context: { reason: 'applied', brakeCount: 0 } }, rev: 1, history: [{ at: new Date(), from: 'applying', to: 'held', reason: 'applied' }], timer: { epoch: 1, wait: 'verify', dueAt: new Date() } });
try {
  const db = client.db('holdfast');
  await db.createCollection('consumers');
  const records = db.collection<{ _id: string }>('consumers');
  await records.insertMany(Array.from({ length: n }, (_, i) => doc(i, 'base')) as never[]);
  await indexFerretDb(store);
  const time = async (what: string, count: number, work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    const ms = performance.now() - started;
    say(`${what.padEnd(40)} ${(ms / count).toFixed(2)} ms/record (${count} in ${Math.round(ms)} ms); load ${loadavg()[0]!.toFixed(2)}`);
  };
  const ids = Array.from({ length: 1000 }, (_, i) => `base/c${String(i).padStart(6, '0')}`);
  await time('findOne by _id, one at a time', 500, async () => {
    for (const id of ids.slice(0, 500)) await records.findOne({ _id: id });
  });

  await time('updateOne by _id, one at a time', 500, async () => {
    for (const id of ids.slice(0, 500)) await records.updateOne({ _id: id }, { $set: { rev: 2 } });
  });
  for (const size of [32, 64, 128, 256]) {
    await time(`bulkWrite updateOne × ${size}`, size, () => records.bulkWrite(ids.slice(0, size).map((id) => ({ updateOne: { filter: { _id: id }, update: { $set: { rev: size } } } })), { ordered: false }));
  }
  await time('insertOne, one at a time', 300, async () => {
    for (let i = 0; i < 300; i++) await records.insertOne(doc(i, 'one') as never);
  });
  for (const size of [32, 256, 1000]) {
    await time(`insertMany × ${size}`, size, () => records.insertMany(Array.from({ length: size }, (_, i) => doc(i, `many${size}`)) as never[], { ordered: false }));
  }
} finally {
  await client.close();
  await store.stop();
  await reapRunDir(run);
}
