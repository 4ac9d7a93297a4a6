/**
 * Makes `_id` lookups on a harness-started FerretDB (SQLite handler) use an index.
 *
 * FerretDB v1.24.2 gives every collection table a unique index on `_ferretdb_sjson->"_id"`,
 * but its queries filter on `_ferretdb_sjson->'$._id'`: another expression, so SQLite scans
 * the whole table for every `findOne({ _id })` and `updateOne({ _id })`. An index on exactly
 * the expression the queries use, `<table>_id_path`, keeps them at about 2 ms however large
 * the collection. FerretDB never looks at indexes it did not create (its own are listed in its
 * metadata), and dropping a collection or database drops this one with it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type { BackendEndpoint } from './types.js';

/** Debian's `sqlite3` command (package `sqlite3`, installed by scripts/install-deps.sh). */
const SQLITE3 = 'sqlite3';

/** How long sqlite3 waits for FerretDB's writers before giving up on a lock. */
const BUSY_TIMEOUT_MS = 10_000;

/** How many database files are worked on at once. */
const PARALLEL_FILES = 4;

interface Sqlite3Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a sqlite3 script (dot-commands and SQL, one per line) on `file`, never creating it. */
function sqlite3(file: string, script: string): Promise<Sqlite3Result> {
  // mode=rw: a database dropped meanwhile makes sqlite3 fail to open it instead of leaving an
  // empty `<database>.sqlite` behind for FerretDB to find.
  const uri = `file:${file.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}?mode=rw`;
  return new Promise((resolve, reject) => {
    const child = spawn(SQLITE3, ['-batch', '-noheader', '-list', uri], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new Error(`${SQLITE3} is not installed (run scripts/install-deps.sh)`, { cause: error })
          : error,
      );
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(`.timeout ${BUSY_TIMEOUT_MS}\n${script}\n`);
  });
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const indexName = (table: string) => `${table}_id_path`;

/** The statement an operator can run on FerretDB's SQLite files for one collection table. */
function idPathIndexSql(table: string): string {
  return `CREATE INDEX IF NOT EXISTS ${ident(indexName(table))} ON ${ident(table)} (_ferretdb_sjson->'$._id');`;
}

/**
 * The errors sqlite3 reported (`Parse error near line 4: …`; the statement and caret it may echo
 * under one are not errors), without "no such table": a collection dropped meanwhile, or a
 * database FerretDB is still creating (no `_ferretdb_collections` yet, so no collection either).
 * A whole database dropped meanwhile is told by its file being gone, checked by the caller.
 */
function realErrors(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^(Error|Parse error|Runtime error)\b/i.test(line) && !/no such table/i.test(line));
}

/** Indexes the collection tables of one database file; returns how many indexes it created. */
async function indexFile(file: string): Promise<number> {
  // One read (the usual case: nothing to do): the tables still lacking the index.
  const missing = await sqlite3(
    file,
    `SELECT c.table_name FROM _ferretdb_collections AS c
       WHERE NOT EXISTS (SELECT 1 FROM sqlite_master AS m WHERE m.type = 'index' AND m.name = c.table_name || '_id_path');`,
  );
  if (!existsSync(file)) return 0; // the database was dropped meanwhile
  const missingErrors = realErrors(missing.stderr);
  if (missingErrors.length > 0) throw new Error(`sqlite3 on ${file}: ${missingErrors.join('; ')}`);
  const tables = missing.stdout.split('\n').filter((t) => t !== '');
  if (tables.length === 0) return 0;

  // All of them in one write transaction; counting the indexes before and after inside it gives
  // exactly how many this call created, whoever else indexes the same file at the same time.
  // A table dropped since the look above only makes its CREATE INDEX fail ("no such table").
  const names = tables.map((t) => literal(indexName(t))).join(', ');
  const count = `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN (${names});`;
  const created = await sqlite3(
    file,
    ['BEGIN IMMEDIATE;', count, ...tables.map(idPathIndexSql), count, 'COMMIT;'].join('\n'),
  );
  if (!existsSync(file)) return 0;
  const createdErrors = realErrors(created.stderr);
  if (createdErrors.length > 0) throw new Error(`sqlite3 on ${file}: ${createdErrors.join('; ')}`);
  const [before, after] = created.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
  if (before === undefined || after === undefined || !Number.isInteger(before) || !Number.isInteger(after)) {
    // the transaction could not even begin (the file went away between the two invocations)
    return 0;
  }
  return after - before;
}

/**
 * Adds an index on `_ferretdb_sjson->'$._id'` to every collection table of a FerretDB the
 * harness started (its endpoint has `sqliteDir`), so `_id` lookups stop scanning; returns how
 * many indexes it created (0 when every table already had one). Any other endpoint (a URL, a
 * container, not MongoDB) is left alone and 0 returned. Databases dropped while it runs are
 * skipped. Call it after the collections exist: collections created later need another call.
 */
export async function indexFerretDb(endpoint: BackendEndpoint): Promise<number> {
  if (endpoint.kind !== 'mongodb' || endpoint.origin !== 'local' || endpoint.sqliteDir === undefined) return 0;
  const dir = endpoint.sqliteDir;
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0; // the server was stopped
    throw error;
  }
  const files = entries.filter((name) => name.endsWith('.sqlite')).map((name) => join(dir, name));
  // a few sqlite3 at a time: a shared server may hold one database per test file
  let created = 0;
  const next = async (): Promise<void> => {
    for (let file = files.shift(); file !== undefined; file = files.shift()) created += await indexFile(file);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_FILES, files.length) }, next));
  return created;
}

/**
 * Creates `collections` in `database` (those that do not exist yet) and indexes them with
 * {@link indexFerretDb}: for a store the harness started, before holdfast first runs on it, so
 * its `_id` lookups never scan, whoever starts holdfast (the engine fixture, a spawned
 * `holdfast run`, the example). Returns how many indexes it created; for any other endpoint
 * it creates the collections only.
 */
export async function prepareFerretDbStore(
  endpoint: BackendEndpoint,
  database: string,
  collections: readonly string[],
): Promise<number> {
  const client = new MongoClient(endpoint.url);
  try {
    const db = client.db(database);
    const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
    for (const name of collections) if (!existing.has(name)) await db.createCollection(name).catch(() => undefined);
  } finally {
    await client.close();
  }
  return indexFerretDb(endpoint);
}
