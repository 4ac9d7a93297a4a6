/**
 * A Redis node's incarnation: `INFO server`'s `run_id`, a random id each start of the server
 * draws. `INFO server` is answered from memory in constant time (no deadline for the server to
 * keep: the read's own deadline is the client's). Redis does not replicate ACL users, so every
 * node is read, replicas and Cluster nodes alike.
 */
import type { NodeRun } from '../incarnation.js';

/** The fields of an `INFO` reply (`key:value` lines; `#` sections skipped). */
export function infoFields(info: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** What `INFO server` says of the run, with the role discovery last found for the node. */
/** What a node is to holdfast: a master, a replica (of a master it found), or a Cluster's node. */
export type NodeRole = 'master' | 'replica' | 'node';

export function redisRunOf(info: string, role: NodeRole): NodeRun {
  const runId = infoFields(info).get('run_id');
  return {
    ...(runId !== undefined && /^[0-9a-f]{40}$/.test(runId) ? { runId } : {}),
    ...(role === 'master' ? { role: 'primary' as const } : role === 'replica' ? { role: 'replica' as const } : {}),
  };
}
