/**
 * How fast the record store answers what holdfast asks of it most: an `_id` read and an `_id`
 * update of a record. Over {@link SLOW_OPERATION_MS} per operation, it names what is probably
 * missing. On FerretDB's SQLite handler that is the index on the expression its `_id` queries
 * use (FerretDB's own `_id` index is on another expression, so each lookup scans the whole
 * collection): the exact `CREATE INDEX` for each collection is given. Both operations name an
 * `_id` no record has: what a miss costs, which is at most what a hit does (a scan reads every
 * row for a miss), and the update writes nothing.
 *
 * FerretDB is told by its `buildInfo` (`ferretdbVersion`), its SQLite handler by the query
 * plans its `explain` returns (SQLite's own `EXPLAIN QUERY PLAN` rows, naming each table).
 */
import type { Db } from 'mongodb';
import type { Logger } from '../logging/logger.js';
import { STORE_COLLECTIONS } from './consumer-store.js';

/** An `_id` read or update slower than this (ms, at best of a few) makes the store slow. */
export const SLOW_OPERATION_MS = 20;
const TRIES = 3;
/** An `_id` no record has (keys are `provider/consumer`). */
const PROBE_ID = 'holdfast speed probe';

/** One collection's table on FerretDB's SQLite handler, and whether its `_id` lookups scan it. */
export interface SqliteTable {
  collection: string;
  table: string;
  scans: boolean;
}

export interface StoreSpeed {
  records: number;
  /** The best of a few tries (ms). */
  readMs: number;
  updateMs: number;
  server: { kind: 'mongodb'; version: string } | { kind: 'ferretdb'; version: string; sqlite: SqliteTable[] | null };
}

/** The best time of a few runs of `operation` (ms); one run already far too slow is enough. */
async function bestOf(operation: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < TRIES && (i === 0 || best < 10 * SLOW_OPERATION_MS); i++) {
    const started = performance.now();
    await operation();
    best = Math.min(best, performance.now() - started);
  }
  return Math.round(best * 10) / 10;
}

/** Each existing collection's table from FerretDB's SQLite plans, or null when the plans are not SQLite's. */
async function sqliteTables(db: Db): Promise<SqliteTable[] | null> {
  const tables: SqliteTable[] = [];
  for (const collection of Object.values(STORE_COLLECTIONS)) {
    const explained = await db.command({ explain: { find: collection, filter: { _id: PROBE_ID } } });
    const plan = (explained.queryPlanner as { Plan?: unknown } | undefined)?.Plan;
    if (!Array.isArray(plan)) return null;
    const rows = plan.filter((row): row is string => typeof row === 'string');
    if (rows.length !== plan.length || rows.some((row) => !/^id=\d+ parent=\d+ notused=\d+ detail=/.test(row)))
      return null;
    const step = rows.map((row) => /detail=(SCAN|SEARCH) (\S+)/.exec(row)).find((m) => m !== null);
    if (step) tables.push({ collection, table: step[2]!, scans: step[1] === 'SCAN' });
  }
  return tables;
}

/**
 * Measures the store on `db` (holdfast's database): reads, and one update that matches nothing;
 * null when it has no records collection yet (an update there would create it, on FerretDB).
 */
export async function measureStoreSpeed(db: Db): Promise<StoreSpeed | null> {
  const records = db.collection<{ _id: string }>(STORE_COLLECTIONS.records);
  if ((await db.listCollections({ name: STORE_COLLECTIONS.records }, { nameOnly: true }).toArray()).length === 0)
    return null;
  const info = await db.command({ buildInfo: 1 });
  const version = String(info.version ?? 'unknown');
  const server: StoreSpeed['server'] =
    typeof info.ferretdbVersion === 'string'
      ? { kind: 'ferretdb', version: info.ferretdbVersion, sqlite: await sqliteTables(db) }
      : { kind: 'mongodb', version };
  const readMs = await bestOf(() => records.findOne({ _id: PROBE_ID }));
  const updateMs = await bestOf(() => records.updateOne({ _id: PROBE_ID }, { $set: { probedAt: new Date() } }));
  return { records: await records.estimatedDocumentCount(), readMs, updateMs, server };
}

/** The statement that gives one FerretDB SQLite table the index its `_id` queries use. */
export function idIndexSql(table: string): string {
  const quoted = `"${table.replace(/"/g, '""')}"`;
  const index = `"${`${table}_id_path`.replace(/"/g, '""')}"`;
  return `CREATE INDEX IF NOT EXISTS ${index} ON ${quoted} (_ferretdb_sjson->'$._id');`;
}

/** What probably makes the store slow, in words. */
function probableCause(server: StoreSpeed['server'], database: string): string {
  if (server.kind === 'mongodb')
    return `it is MongoDB ${server.version}, which finds an _id by index: the server is probably overloaded, or far from holdfast (a slow round trip)`;
  if (!server.sqlite)
    return `it is FerretDB ${server.version} on a backend other than SQLite: check that backend's load and its _id index`;
  const scanning = server.sqlite.filter((t) => t.scans);
  if (scanning.length === 0)
    return `it is FerretDB ${server.version} on SQLite with the _id index in place: its machine or disk is probably overloaded`;
  return (
    `it is FerretDB ${server.version} on SQLite, whose _id lookups scan the whole collection (${scanning.map((t) => t.collection).join(', ')}) ` +
    `without an index on the expression its queries use. Add it to ${database}.sqlite in FerretDB's SQLite directory ` +
    `(sqlite3 <dir>/${database}.sqlite; safe while FerretDB runs, which ignores indexes it did not make): ${scanning.map((t) => idIndexSql(t.table)).join(' ')}`
  );
}

/** One line naming a store that is slow per operation and what is probably missing; null when it is not slow. */
export function slowStoreVerdict(speed: StoreSpeed, where: string, database: string): string | null {
  if (Math.max(speed.readMs, speed.updateMs) <= SLOW_OPERATION_MS) return null;
  return (
    `the record store (${where}) is slow per operation: an _id read takes ${speed.readMs} ms and an _id update ${speed.updateMs} ms ` +
    `at ${speed.records} records (over ${SLOW_OPERATION_MS} ms); ${probableCause(speed.server, database)}`
  );
}

/**
 * For `holdfast run`, once at start-up: a warning when the store is slow per operation, else its speed in one line.
 * Never throws.
 */
export async function reportStoreSpeed(db: Db, where: string, logger: Logger): Promise<void> {
  try {
    const speed = await measureStoreSpeed(db);
    if (!speed) return;
    const verdict = slowStoreVerdict(speed, where, db.databaseName);
    const fields = { store: where, records: speed.records, readMs: speed.readMs, updateMs: speed.updateMs };
    if (verdict) logger.warn(fields, verdict);
    else
      logger.info(
        fields,
        `the record store answers an _id read in ${speed.readMs} ms and an _id update in ${speed.updateMs} ms at ${speed.records} records`,
      );
  } catch (error) {
    logger.debug(
      { store: where, err: error instanceof Error ? error.message : String(error) },
      'the record store could not be measured',
    );
  }
}
