/**
 * A MongoDB node's incarnation, from what the server offers: mongod's `hello` gives
 * `topologyVersion.processId` (an ObjectId drawn at each start); FerretDB v1.24's `hello` gives
 * none, so `serverStatus` is asked: its `pid`, and the start time its `localTime` less its
 * `uptimeMillis` tells (a pid alone would not do: in a container it is always the same). Both
 * commands carry `maxTimeMS`, the read's deadline, for the server to keep.
 */
import { ObjectId, type Db, type Document } from 'mongodb';
import type { NodeRun } from '../incarnation.js';

/** The run `hello` says, when it names its process (mongod); undefined when it does not (FerretDB). */
export function runOfHello(hello: Document): NodeRun | undefined {
  const processId: unknown = (hello.topologyVersion as Document | undefined)?.processId;
  const id = processId instanceof ObjectId ? processId.toHexString() : typeof processId === 'string' ? processId : '';
  if (id === '') return undefined;
  const role = hello.isWritablePrimary === true ? 'primary' : hello.secondary === true ? 'replica' : undefined;
  return { runId: `process ${id}`, ...(role !== undefined ? { role } : {}) };
}

/** The run `serverStatus` says: its pid and the start time its uptime tells. */
export function runOfServerStatus(status: Document): NodeRun {
  const pid: unknown = status.pid;
  const localTime: unknown = status.localTime;
  const uptimeMs: unknown = status.uptimeMillis;
  const now = localTime instanceof Date ? localTime.getTime() : Number.NaN;
  const startedAt = typeof uptimeMs === 'number' && Number.isFinite(now) ? now - uptimeMs : undefined;
  return {
    ...(typeof pid === 'number' || typeof pid === 'bigint' ? { runId: `pid ${String(pid)}` } : {}),
    ...(startedAt !== undefined ? { startedAt } : {}),
  };
}

/** Reads the run of the node `admin` is on: `hello`, then `serverStatus` when `hello` names no process. */
export async function readMongoRun(admin: Db, signal: AbortSignal, timeoutMs: number): Promise<NodeRun> {
  const maxTimeMS = Math.max(1, timeoutMs);
  const hello = await admin.command({ hello: 1, maxTimeMS }, { signal });
  return runOfHello(hello) ?? runOfServerStatus(await admin.command({ serverStatus: 1, maxTimeMS }, { signal }));
}
