/**
 * Each node's incarnation, from what the reads found: a node that answers with another identity,
 * is promoted, or answers again after not answering, is a new incarnation, told once to the
 * listeners. The first read of a node is its first incarnation (no change told). Pure but for the
 * clock it is given: no I/O.
 */
import {
  FORGETS,
  type Incarnation,
  type IncarnationChange,
  type IncarnationKind,
  type IncarnationSource,
  type NodeRun,
} from './incarnation.js';

/**
 * Two start times read from uptimes (FerretDB: `localTime - uptimeMillis`) of the same run differ by
 * a few milliseconds; another run started later than the first one's whole life.
 */
export const START_TOLERANCE_MS = 2_000;

/** How many nodes that left the backend are remembered (by their last incarnation), the oldest forgotten first. */
export const GONE_KEPT = 256;

/** Why `run` is another incarnation than `previous`, if it is; `silent`: the node did not answer meanwhile. */
export function changeOf(previous: NodeRun, run: NodeRun, silent: boolean): IncarnationKind | undefined {
  const differs = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a !== b;
  if (differs(previous.systemId, run.systemId)) return 'new-system-id';
  if (differs(previous.runId, run.runId)) return 'new-run-id';
  const was = previous.startedAt;
  if (was !== undefined && run.startedAt !== undefined && Math.abs(run.startedAt - was) > START_TOLERANCE_MS)
    return 'new-run-id';
  if (previous.role === 'replica' && run.role === 'primary') return 'promoted';
  return silent ? 'answers-again' : undefined;
}

function words(kind: IncarnationKind, previous: Incarnation, current: Incarnation, silentWhy: string | undefined) {
  const at = (startedAt: number | undefined) => (startedAt === undefined ? '?' : new Date(startedAt).toISOString());
  switch (kind) {
    case 'new-system-id':
      return `system identifier ${current.systemId ?? '?'} (was ${previous.systemId ?? '?'})`;
    case 'new-run-id':
      return previous.runId !== current.runId
        ? `run ${current.runId ?? '?'} (was ${previous.runId ?? '?'})`
        : `started ${at(current.startedAt)} (the run seen before started ${at(previous.startedAt)})`;
    case 'promoted':
      return 'a replica before, a primary now';
    case 'answers-again':
      return `answers again after not answering (${silentWhy ?? 'no answer'})`;
    case 'joined':
      return 'a node the backend did not have when holdfast first read it';
  }
}

export class IncarnationTracker implements IncarnationSource {
  private readonly current = new Map<string, Incarnation>();
  /** The nodes that did not answer since their last read, and why (a code, never a server's words). */
  private readonly silent = new Map<string, string>();
  private readonly listeners = new Set<(change: IncarnationChange) => void>();
  /** Nodes that joined the backend since it was first read: their first read is told (`joined`). */
  private readonly joining = new Set<string>();
  /** The last incarnation of nodes no longer the backend's: one that comes back is compared with it. */
  private readonly gone = new Map<string, Incarnation>();

  constructor(private readonly now: () => number = Date.now) {}

  incarnations(): ReadonlyMap<string, Incarnation> {
    return new Map(this.current);
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** `node` answered a read with `run`. */
  answered(node: string, run: NodeRun): void {
    const back = this.current.has(node) ? undefined : this.gone.get(node);
    const previous = this.current.get(node) ?? back;
    // a node that left the backend (dropped from its topology while down) and is back did not answer meanwhile
    const silentWhy = this.silent.get(node) ?? (back ? 'left-the-backend' : undefined);
    this.silent.delete(node);
    this.gone.delete(node);
    if (previous === undefined) {
      // a node new to the backend holds none of its logins (Redis does not replicate ACL users)
      const joined = this.joining.delete(node);
      const first = this.incarnation(node, run, 1, joined ? this.now() : undefined);
      this.current.set(node, first);
      if (joined)
        this.tell({
          node,
          previous: first,
          current: first,
          why: 'joined',
          detail: words('joined', first, first, undefined),
        });
      return;
    }
    const why = changeOf(previous, run, silentWhy !== undefined);
    if (why === undefined) {
      // the same run: what it says now (a role, an id a degraded read lacked) kept, its count and first sight too
      this.current.set(node, { ...previous, ...defined(run) });
      return;
    }
    // a read that could not say who the node is (after a restart, `INFO` refused until its users are back) keeps the
    // identity last known: the next read that says it is compared with that, and a new run is still told
    const forgotAt = FORGETS.has(why) ? this.now() : previous.forgotAt;
    const current = this.incarnation(node, { ...identityOf(previous), ...defined(run) }, previous.seq + 1, forgotAt);
    this.current.set(node, current);
    const change: IncarnationChange = {
      node,
      previous,
      current,
      why,
      detail: words(why, previous, current, silentWhy),
    };
    this.tell(change);
  }

  private tell(change: IncarnationChange): void {
    for (const listener of this.listeners) listener(change);
  }

  /** `node` joined the backend after its first read (a replica added, discovered through Sentinel or the Cluster). */
  joined(node: string): void {
    if (!this.current.has(node) && !this.gone.has(node)) this.joining.add(node);
  }

  /** `node` did not answer; `why` is a code or a driver's error name, never a server's words. */
  failed(node: string, why: string): void {
    if (!this.silent.has(node)) this.silent.set(node, why);
  }

  /** `node` is no longer one of the backend's: forgotten. */
  forget(node: string): void {
    const last = this.current.get(node);
    this.current.delete(node);
    this.silent.delete(node);
    this.joining.delete(node);
    if (last === undefined) return;
    this.gone.set(node, last);
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
  }

  private incarnation(node: string, run: NodeRun, seq: number, forgotAt: number | undefined): Incarnation {
    const seen = { ...defined(run), node, seq, seenAt: new Date(this.now()).toISOString() };
    return forgotAt === undefined ? seen : { ...seen, forgotAt };
  }
}

/** What identifies a run of `incarnation`'s node (its ids and start), without the rest. */
function identityOf({ runId, systemId, startedAt }: Incarnation): NodeRun {
  return defined({ runId, systemId, startedAt });
}

/** `run` without its undefined fields. */
function defined(run: NodeRun): NodeRun {
  return Object.fromEntries(Object.entries(run).filter(([, v]) => v !== undefined));
}
