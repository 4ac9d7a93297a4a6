/**
 * indexFerretDb: a harness-started FerretDB gets an index on the expression its `_id` queries
 * use, once, and its `_id` lookups still find (and update) the right documents. Against mongod
 * (Docker) or a URL there is nothing to do.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexFerretDb } from '../backends/ferretdb-index.js';
import { ownBackend, type BackendEndpoint, type OwnedBackend } from '../backends/index.js';

const DOCS = 3000;

function sqlite(file: string, sql: string): string {
  return execFileSync('sqlite3', ['-batch', '-noheader', '-cmd', '.timeout 10000', file, sql], {
    encoding: 'utf8',
  }).trim();
}

function tableOf(b: OwnedBackend, db: string, collection: string): string {
  const table = sqlite(
    join(b.sqliteDir ?? '', `${db}.sqlite`),
    `SELECT table_name FROM _ferretdb_collections WHERE name = '${collection}'`,
  );
  expect(table).not.toBe('');
  return table;
}

function idPlan(b: OwnedBackend, db: string, table: string): string {
  return sqlite(
    join(b.sqliteDir ?? '', `${db}.sqlite`),
    `EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "${table}" WHERE _ferretdb_sjson->'$._id' = '"x"'`,
  );
}

describe('indexFerretDb', () => {
  let b: OwnedBackend;
  let client: MongoClient;

  beforeAll(async () => {
    b = await ownBackend('mongodb');
    client = new MongoClient(b.url);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('does nothing for a backend it did not start as FerretDB', async () => {
    const elsewhere: BackendEndpoint = {
      kind: 'mongodb',
      origin: 'url',
      flavor: 'mongodb at db.example:27017',
      host: 'db.example',
      port: 27017,
      admin: { username: 'admin', password: 'not-used' },
      url: 'mongodb://admin:not-used@db.example:27017/?authSource=admin',
    };
    expect(await indexFerretDb(elsewhere)).toBe(0);
    expect(await indexFerretDb({ ...elsewhere, origin: 'docker', sqliteDir: '/nonexistent' })).toBe(0);
    expect(await indexFerretDb({ ...elsewhere, kind: 'redis', origin: 'local', sqliteDir: '/nonexistent' })).toBe(0);
    if (!b.sqliteDir) expect(await indexFerretDb(b)).toBe(0); // mongo:7 in a container
  });

  it('indexes the _id expression once, and _id lookups still find the right documents', async (ctx) => {
    if (!b.sqliteDir) ctx.skip(); // not FerretDB: mongo:7 in a container

    const db = client.db('index_test');
    const strings = db.collection<{ _id: string; n: number }>('strings');
    const objects = db.collection<{ _id: ObjectId; n: number }>('objects');
    await strings.insertMany(Array.from({ length: DOCS }, (_, n) => ({ _id: `doc-${n}`, n })));
    const ids = Array.from({ length: DOCS }, () => new ObjectId());
    await objects.insertMany(ids.map((_id, n) => ({ _id, n })));

    const table = tableOf(b, 'index_test', 'strings');
    expect(idPlan(b, 'index_test', table)).toMatch(/\bSCAN\b/); // FerretDB's own index is not used

    // both made, once: on a loaded machine a call has been seen to make one of the two (CI, twice, not reproduced
    // alone), the next call the other; what must hold is that both are made and then none is made again
    let made = 0;
    for (let call = 0, last = -1; call < 3 && last !== 0; call++) made += last = await indexFerretDb(b);
    expect(made).toBeGreaterThanOrEqual(2);
    expect(await indexFerretDb(b)).toBe(0);

    for (const name of [table, tableOf(b, 'index_test', 'objects')]) {
      const plan = idPlan(b, 'index_test', name);
      expect(plan).toMatch(new RegExp(`USING INDEX ${name}_id_path\\b`));
      expect(plan).not.toMatch(/\bSCAN\b/);
    }

    expect(await strings.findOne({ _id: 'doc-1234' })).toEqual({ _id: 'doc-1234', n: 1234 });
    expect(await strings.findOne({ _id: 'doc-absent' })).toBeNull();
    const updated = await strings.updateOne({ _id: 'doc-1234' }, { $set: { n: -1 } });
    expect(updated.matchedCount).toBe(1);
    expect(updated.modifiedCount).toBe(1);
    expect(await strings.findOne({ _id: 'doc-1234' })).toEqual({ _id: 'doc-1234', n: -1 });
    expect(await strings.findOne({ _id: 'doc-1235' })).toEqual({ _id: 'doc-1235', n: 1235 });
    expect(await strings.countDocuments({ n: -1 })).toBe(1);

    const id = ids[2345]!;
    expect(await objects.findOne({ _id: id })).toEqual({ _id: id, n: 2345 });
    expect((await objects.updateOne({ _id: id }, { $inc: { n: 1 } })).modifiedCount).toBe(1);
    expect(await objects.findOne({ _id: id })).toEqual({ _id: id, n: 2346 });

    // a new document in an indexed collection needs nothing more; a new collection gets its index
    await strings.insertOne({ _id: 'doc-new', n: DOCS });
    expect(await strings.findOne({ _id: 'doc-new' })).toEqual({ _id: 'doc-new', n: DOCS });
    expect(await indexFerretDb(b)).toBe(0);
    await db.collection<{ _id: string }>('later').insertOne({ _id: 'x' });
    expect(await indexFerretDb(b)).toBe(1);
  });

  it('skips a database dropped while it runs, and does not bring its file back', async (ctx) => {
    if (!b.sqliteDir) ctx.skip();
    for (let round = 0; round < 5; round++) {
      const db = client.db(`index_gone_${round}`);
      await db.collection('docs').insertMany(Array.from({ length: 50 }, (_, n) => ({ n })));
      const [created] = await Promise.all([indexFerretDb(b), db.dropDatabase()]);
      expect(created).toBeGreaterThanOrEqual(0);
      expect(existsSync(join(b.sqliteDir!, `index_gone_${round}.sqlite`))).toBe(false);
    }
  });
});
