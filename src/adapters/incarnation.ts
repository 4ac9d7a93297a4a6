/**
 * A node's incarnation: what identifies one run of a backend's server (rule 13). A node that comes
 * back as a new incarnation may have forgotten every login it held, so every consumer it serves is
 * to be asked again at once. An adapter that can tell offers an {@link IncarnationSource}; the
 * engine decides on {@link IncarnationChange.why}, never on its words.
 */

/**
 * Why a node is a new incarnation, strongest first:
 *
 * - `new-system-id`: the data's own identity differs (PostgreSQL's system identifier: a data
 *   directory re-initialised, or another server at the same address);
 * - `new-run-id`: the server says it is another run (Redis `run_id`, PostgreSQL's postmaster start
 *   time, MongoDB's `topologyVersion.processId`, or its pid and start time);
 * - `promoted`: the node was a replica (a standby) and is a primary now;
 * - `answers-again`: it did not answer (refused, reset, timed out) and answers again, the server
 *   saying nothing that tells whether it restarted (SeaweedFS), or the same run (a network cut);
 *   a node that left the backend's topology and is back is compared with its last run the same way;
 * - `joined`: a node the backend did not have when holdfast first read it (a replica added): it
 *   holds none of the logins (Redis does not replicate ACL users).
 */
export type IncarnationKind = 'new-system-id' | 'new-run-id' | 'promoted' | 'answers-again' | 'joined';

/** What one read of a node found; every field absent where the server does not say it. */
export interface NodeRun {
  /** The server's own identity of this run (Redis `run_id`, PostgreSQL's start time as text). */
  runId?: string | undefined;
  /** The identity of the data the server runs on (PostgreSQL's system identifier). */
  systemId?: string | undefined;
  /** When this run started (epoch ms), where the server says it only as an uptime (FerretDB). */
  startedAt?: number | undefined;
  role?: 'primary' | 'replica' | undefined;
}

/** One incarnation of a node as holdfast saw it. No secret in it. */
export interface Incarnation extends NodeRun {
  /** `host:port`. */
  readonly node: string;
  /** holdfast's count of this node's incarnations since the adapter connected: 1 for the first seen. */
  readonly seq: number;
  /** When holdfast first saw it (ISO). */
  readonly seenAt: string;
  /**
   * When holdfast last saw this node begin holding none of the logins it held (epoch ms): a new run, a new data
   * directory, or a node that joined the backend. Absent while it has not (its first incarnation read, a promotion,
   * an answer again after a silence).
   */
  readonly forgotAt?: number;
}

/** The kinds of change after which a node holds none of the logins it held (Redis does not persist ACL users set at run time). */
export const FORGETS: ReadonlySet<IncarnationKind> = new Set(['new-system-id', 'new-run-id', 'joined']);

/** A node seen as a new incarnation. */
export interface IncarnationChange {
  node: string;
  previous: Incarnation;
  current: Incarnation;
  why: IncarnationKind;
  /** What was seen, in words for a log line (ids and times, never a secret). */
  detail: string;
}

/** What an adapter offers of its nodes' incarnations. Reading starts at the first call of either. */
export interface IncarnationSource {
  /** Each node's incarnation now (`host:port` → incarnation); a node not read yet is absent. */
  incarnations(): ReadonlyMap<string, Incarnation>;
  /** Tells `listener` of each node seen as a new incarnation, once per change. Returns the unsubscribe. */
  onIncarnation(listener: (change: IncarnationChange) => void): () => void;
}
