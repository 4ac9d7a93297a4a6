/**
 * The store tells on itself: on FerretDB's SQLite handler without the expression index, with
 * enough records that each `_id` lookup scan passes 20 ms, `holdfast doctor` names the store as
 * slow per operation with the exact `CREATE INDEX` for each collection, and `holdfast run` warns
 * the same once at start-up; with the index, the doctor finds nothing and run says how fast.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { indexFerretDb } from '../../backends/ferretdb-index.js';
import { ownBackend, type OwnedBackend } from '../../backends/index.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

/** Records of about 1.3 kB: an unindexed `_id` scan passes 20 ms at about 500 of them here; 3000 leave no doubt. */
const RECORDS = 3000;

function sqlite(b: OwnedBackend, database: string, sql: string): string[] {
  const file = join(b.sqliteDir!, `${database}.sqlite`);
  return execFileSync('sqlite3', ['-batch', '-noheader', '-cmd', '.timeout 10000', file, sql], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

async function holdfastOnce(args: string[]): Promise<{ code: number | null | 'still running'; output: string }> {
  const child = spawnHoldfast(args);
  const code = await exitOf(child, 120_000);
  if (code === 'still running') child.kill('SIGKILL');
  return { code, output: child.output() };
}

/** `holdfast run` until its output matches `what` (then stopped); the output. */
async function runUntil(f: EngineFixture, what: RegExp): Promise<string> {
  const run = spawnHoldfast(['run', '-c', join(f.dir, 'holdfast.yaml')]);
  try {
    await f.until(`holdfast run says ${what}`, () => what.test(run.output()), 60_000);
    return run.output();
  } finally {
    run.kill('SIGTERM');
    if ((await exitOf(run, 20_000)) === 'still running') run.kill('SIGKILL');
  }
}

describe('the store tells on itself', () => {
  const fixture = engineFixtures();

  it('doctor and run name FerretDB without its _id index, with the exact CREATE INDEX, and not with it', async (ctx) => {
    const store = await ownBackend('mongodb');
    if (!store.sqliteDir) ctx.skip(); // mongo:7 in a container: not FerretDB
    const f = await fixture({ store, consumers: 1 });
    const database = f.config.store.database;
    await f.startHeld();
    for (const engine of f.engines.splice(0)) await engine.stop();

    // records cloned from a real one, for a provider not configured and with no timer: nothing acts on them
    const client = new MongoClient(store.url);
    try {
      const records = client.db(database).collection<{ _id: string }>('consumers');
      const real = (await records.findOne({}))!;
      const clones = Array.from({ length: RECORDS - 1 }, (_, n) => ({
        ...real,
        _id: `seed/c${String(n).padStart(5, '0')}`,
        provider: 'seed',
        timer: null,
      }));
      for (let i = 0; i < clones.length; i += 500) await records.insertMany(clones.slice(i, i + 500));
    } finally {
      await client.close();
    }
    // the harness indexed the tables when it made them: drop the indexes, as a FerretDB set up by hand would lack
    // them (with FerretDB stopped: a running one may keep planning with an index dropped under it)
    await store.down();
    for (const index of sqlite(
      store,
      database,
      "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%\\_id\\_path' ESCAPE '\\'",
    )) {
      sqlite(store, database, `DROP INDEX "${index}"`);
    }
    await store.up();
    const tables = Object.fromEntries(
      sqlite(store, database, 'SELECT name, table_name FROM _ferretdb_collections').map(
        (row) => row.split('|') as [string, string],
      ),
    );
    const statement = (table: string) =>
      `CREATE INDEX IF NOT EXISTS "${table}_id_path" ON "${table}" (_ferretdb_sjson->'$._id');`;

    const slow = await holdfastOnce(['doctor', '-c', join(f.dir, 'holdfast.yaml')]);
    console.log(`doctor without the index (${RECORDS} records):\n${slow.output}`);
    expect(slow.code).toBe(1);
    const verdict = slow.output.split('\n').find((line) => line.includes('slow per operation'));
    expect(verdict).toMatch(
      new RegExp(
        `^holdfast doctor: the record store \\(${f.config.store.url.replace(/[.?/]/g, '\\$&')}\\) is slow per operation: an _id read takes [\\d.]+ ms and an _id update [\\d.]+ ms at ${RECORDS} records \\(over 20 ms\\); it is FerretDB v\\S+ on SQLite`,
      ),
    );
    expect(verdict).toContain(statement(tables.consumers!));
    expect(verdict).toContain(statement(tables.providers!));
    expect(slow.output).toContain('holdfast doctor: 1 problem');

    const warned = await runUntil(f, /"msg":"the record store \([^"]*\) is slow per operation/);
    const warnings = warned.split('\n').filter((line) => line.includes('slow per operation'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, store: f.config.store.url, records: RECORDS });
    expect(warnings[0]).toContain(statement(tables.consumers!).replace(/"/g, '\\"'));

    expect(await indexFerretDb(store)).toBe(2);
    const fast = await holdfastOnce(['doctor', '-c', join(f.dir, 'holdfast.yaml')]);
    console.log(`doctor with the index:\n${fast.output}`);
    expect(fast.output).not.toContain('slow per operation');
    expect(fast.output).toMatch(/^holdfast doctor: no problem found \(as uid \d+\)$/m);
    expect(fast.code).toBe(0);
    const quiet = await runUntil(
      f,
      /the record store answers an _id read in [\d.]+ ms and an _id update in [\d.]+ ms at \d+ records/,
    );
    console.log(`run with the index: ${quiet.split('\n').find((line) => line.includes('answers an _id read'))}`);
    expect(quiet).not.toContain('slow per operation');
  });
});
