/**
 * The `redis-acl` adapter of a backend of several nodes: each consumer held on every node
 * ({@link RedisNodes}), since Redis does not replicate ACL users.
 *
 * - `create` applies on every answering node that lacks the login or differs (the others are
 *   sent nothing); `remove` removes on every node, and fails (to be tried again) while a node
 *   that has not answered may still hold it.
 * - `authenticates` (light) is one `AUTH` per node, at most {@link AUTH_IN_FLIGHT} in flight per
 *   probe connection until one succeeds there (Redis 7.0 closes an unauthenticated connection after
 *   a few pipelined failed `AUTH`s; `probe-line.ts`); a node whose probe fails proves nothing, and
 *   the deep check is asked.
 * - `holds` (deep) compares the rules on every node and names the node(s) that do not hold it.
 * - A node that cannot be asked is a node problem: it is left out of every answer (said once,
 *   by {@link RedisNodes}), the consumers stay held on the nodes that answer, and nothing is
 *   applied elsewhere because of it. Only when no node answers is the call unable to ask.
 */
import type {
  Adapter,
  AdminConnection,
  AdminTopology,
  BatchForm,
  CallOptions,
  Each,
  Grant,
  HoldsAnswer,
  LoginSession,
  Ownership,
} from '../adapter.js';
import { BackendCalls } from '../backend-calls.js';
import type { Incarnation, IncarnationChange } from '../incarnation.js';
import { HoldfastError, isHoldfastError } from '../../errors/holdfast-error.js';
import type { RedisAclAdapterOptions } from './redis-acl-adapter.js';
import { ProbeLine } from './probe-line.js';
import { RedisNodes, type NodeEvent, type NodeReport, type RedisNode, type RedisNodesOptions } from './redis-nodes.js';
import type { RedisAclValues } from './values.js';
import type { FailedLoginsRead } from '../login-failures.js';

/**
 * `AUTH`s in flight at most on a node's probe connection while it is unauthenticated (no AUTH
 * succeeded on it since it connected): Redis 7.0.15 closes an unauthenticated connection whose
 * unread replies outgrow about 1 KB, i.e. 16 pipelined `WRONGPASS` replies (measured: 64 in
 * flight closed it, 16 did not). Once an AUTH succeeded, the connection is authenticated and
 * the checks go unbounded (pipelined by ioredis).
 */
export const AUTH_IN_FLIGHT = 8;

/**
 * What a consumer of a Redis Cluster needs beside its own rules, granted after the deny list:
 * a cluster-aware client reads the slot map (`CLUSTER SLOTS`) and ioredis's ready check asks
 * `CLUSTER INFO`. No other `CLUSTER` subcommand.
 */
export const CLUSTER_CLIENT_COMMANDS: readonly string[] = ['+cluster|slots', '+cluster|info'];

/** Refused, or answered with an error: the node was asked and said no (not a node that could not be reached). */
function answeredWithError(error: unknown): boolean {
  return isHoldfastError(error, 'BACKEND_REFUSED') || isHoldfastError(error, 'BACKEND_ERROR');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type NodeResult<T> = { node: RedisNode; ok: true; value: T } | { node: RedisNode; ok: false; error: unknown };

/** The `j`th grant's part of a batch call's per-node results. */
function partOf<T>(results: ReadonlyArray<NodeResult<ReadonlyArray<Each<T>>>>, j: number): Array<NodeResult<T>> {
  return results.map((r): NodeResult<T> => {
    if (!r.ok) return r;
    const each = r.value[j];
    if (each === undefined) return { node: r.node, ok: false, error: new Error('no answer for this login') };
    return each.ok ? { node: r.node, ok: true, value: each.value } : { node: r.node, ok: false, error: each.error };
  });
}

function eachOf<T>(settle: () => T): Each<T> {
  try {
    return { ok: true, value: settle() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Consumers per batch call: each node is sent one pipeline of this many `ACL GETUSER`s, then of `ACL SETUSER`s. */
export const REDIS_BATCH_LIMIT = 256;

export class RedisNodesAdapter implements Adapter<RedisAclValues> {
  readonly nodes: RedisNodes;
  /** Pipelined per node: a batch is one round trip per node and kind of command. */
  readonly batch: BatchForm = { form: 'pipeline', limit: REDIS_BATCH_LIMIT };
  private readonly probes = new Map<RedisNode, { calls: BackendCalls; line: ProbeLine }>();

  constructor(
    admin: AdminConnection,
    topology: AdminTopology,
    ownership: Ownership,
    options: RedisNodesOptions & { node?: RedisAclAdapterOptions } = {},
  ) {
    const node: RedisAclAdapterOptions = {
      ...options.node,
      ...(topology.form === 'cluster'
        ? { grantedCommands: [...(options.node?.grantedCommands ?? []), ...CLUSTER_CLIENT_COMMANDS] }
        : {}),
    };
    this.nodes = new RedisNodes(admin, topology, ownership, { ...options, node });
  }

  onNodeEvent(listener: (event: NodeEvent) => void): () => void {
    return this.nodes.onEvent(listener);
  }

  nodeReport(): NodeReport[] {
    return this.nodes.report();
  }

  /** Each node's `run_id` (`INFO server`), read at each health ping once asked. */
  incarnations(): ReadonlyMap<string, Incarnation> {
    return this.nodes.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    return this.nodes.onIncarnation(listener);
  }

  async create(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<void> {
    await this.nodes.first;
    const reserved = this.reserved(grant.login);
    if (reserved) throw reserved;
    this.settleCreate(grant, await this.onEvery(signal, (node, s) => node.acl.apply(grant, s, true)), signal);
  }

  /**
   * {@link create} for several grants: on each answering node, one pipeline of `ACL GETUSER`s and
   * one of the `ACL SETUSER`s that node lacks (`RedisAclAdapter.applyMany`); each grant settled
   * as {@link create} settles it, on its own.
   */
  async createMany(grants: ReadonlyArray<Grant<RedisAclValues>>, { signal }: CallOptions): Promise<Array<Each<void>>> {
    await this.nodes.first;
    const out: Array<Each<void> | undefined> = grants.map((g) => {
      const reserved = this.reserved(g.login);
      return reserved ? { ok: false, error: reserved } : undefined;
    });
    const at = grants.flatMap((_, i) => (out[i] === undefined ? [i] : []));
    const sent = at.map((i) => grants[i]!);
    if (sent.length > 0) {
      const results = await this.onEvery(signal, (node, s) => node.acl.applyMany(sent, s, true));
      at.forEach((i, j) => (out[i] = eachOf(() => this.settleCreate(sent[j]!, partOf(results, j), signal))));
    }
    return out.map((o) => o ?? { ok: false, error: new Error('not settled') });
  }

  /** {@link holds} for several grants: one pipeline of `ACL GETUSER`s per node; each grant's answer its own. */
  async holdsMany(
    grants: ReadonlyArray<Grant<RedisAclValues>>,
    { signal }: CallOptions,
  ): Promise<Array<Each<HoldsAnswer>>> {
    const results = await this.onEvery(signal, (node, s) => node.acl.holdsMany(grants, { signal: s }));
    return grants.map((grant, j) => eachOf(() => this.settleHolds(grant, partOf(results, j), signal)));
  }

  /** A replica's masteruser is the operator's: refused as a consumer's login, nothing sent. */
  private reserved(login: string): HoldfastError | undefined {
    const reserved = this.nodes.masterUserReason(login);
    if (reserved === undefined) return undefined;
    return new HoldfastError(
      'BACKEND_REFUSED',
      `redis-acl: "${login}" ${reserved} (the login it replicates with: the operator's); no consumer may have it, adopt or not; nothing was sent`,
    );
  }

  /** One grant's apply on every node, settled: the nodes that lack it told, an apply refused or failed there thrown. */
  private settleCreate(grant: Grant<RedisAclValues>, results: Array<NodeResult<unknown>>, signal: AbortSignal): void {
    // refused, or answered with an error: the apply failed (a node that could not be reached is the node's problem)
    const failedThere = (r: NodeResult<unknown>) => !r.ok && answeredWithError(r.error);
    for (const r of results) {
      if (r.ok) r.node.missing.clear(grant.login);
      else if (failedThere(r))
        r.node.missing.mark(grant.login, 'failed', `applying there failed (${messageOf(r.error)})`);
    }
    const failed = results.find(failedThere);
    if (failed && !failed.ok) throw failed.error;
    this.answeredSomewhere(results, signal);
  }

  async remove(login: string, { signal }: CallOptions): Promise<void> {
    await this.nodes.first;
    // a replica's masteruser is the operator's: never removed (as Redis's default user is not), and that succeeds
    if (this.nodes.masterUserReason(login) !== undefined) return;
    const results = await this.onEvery(signal, (node, s) => node.acl.remove(login, { signal: s }));
    for (const r of results) if (r.ok) r.node.missing.clear(login);
    this.answeredSomewhere(results, signal);
    const unasked = [
      ...this.nodes
        .all()
        .filter((n) => !n.answering)
        .map((n) => n.address),
      ...results.filter((r) => !r.ok).map((r) => r.node.address),
    ];
    if (unasked.length > 0) {
      throw new HoldfastError(
        'BACKEND_UNAVAILABLE',
        `redis-acl: "${login}" removed on the nodes that answer; ${[...new Set(unasked)].join(', ')} cannot be asked: removed there when it answers`,
      );
    }
  }

  async holds(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<HoldsAnswer> {
    return this.settleHolds(
      grant,
      await this.onEvery(signal, (node, s) => node.acl.holds(grant, { signal: s })),
      signal,
    );
  }

  /** One grant's deep check on every node, settled: the nodes that lack it told, and the answer. */
  private settleHolds(
    grant: Grant<RedisAclValues>,
    results: Array<NodeResult<HoldsAnswer>>,
    signal: AbortSignal,
  ): HoldsAnswer {
    const answers = this.answeredSomewhere(results, signal);
    for (const r of results) {
      // a node already found lacking it that answers the deep check with an error (a right the admin lacks there): that
      // says why
      if (!r.ok && answeredWithError(r.error) && r.node.missing.has(grant.login))
        r.node.missing.mark(grant.login, 'failed', `checking there failed (${messageOf(r.error)})`);
    }
    for (const { node, value } of answers) {
      if (value.held) node.missing.clear(grant.login);
      else node.missing.mark(grant.login, 'rules', `not held there (${value.reason}): being applied`);
    }
    const notHeld = answers.filter((a) => !a.value.held);
    const first = notHeld[0];
    if (first === undefined || first.value.held) return { held: true };
    // not held anywhere: said as on one node (with the nodes named when there are several)
    if (notHeld.length === answers.length) {
      const detail =
        answers.length > 1
          ? `${first.value.detail} (on every node: ${answers.map((a) => a.node.address).join(', ')})`
          : first.value.detail;
      return { held: false, reason: first.value.reason, detail };
    }
    const where = notHeld.map((a) => a.node.address).join(', ');
    return { held: false, reason: first.value.reason, detail: first.value.detail, node: where };
  }

  async authenticates(grant: Grant<RedisAclValues>, { signal }: CallOptions): Promise<boolean> {
    const results = await this.onEvery(signal, (node, s) => {
      if (node.acl.probeAuthenticated) return node.acl.authenticates(grant, { signal: s });
      // unauthenticated: in line, a few at a time, until an AUTH succeeds there (`probe-line.ts`)
      const { calls, line } = this.probeOf(node);
      const refused = () => calls.deadline(`AUTH as "${grant.login}"`);
      return line.run(s, refused, () => node.acl.authenticates(grant, { signal: s }));
    });
    this.answeredSomewhere(results, signal);
    for (const r of results) {
      if (!r.ok) continue; // proves nothing
      if (r.value) r.node.missing.clear(grant.login, 'auth');
      else
        r.node.missing.mark(
          grant.login,
          'auth',
          'the light check could not authenticate there: being checked and applied',
        );
    }
    // a probe that failed (its connection closed under a burst, say) proves nothing: the deep check is asked
    return results.length > 0 && results.every((r) => r.ok && r.value);
  }

  async ping({ signal }: CallOptions): Promise<void> {
    const results = await this.onEvery(signal, (node, s) => node.acl.ping({ signal: s }));
    this.answeredSomewhere(results, signal);
    const silent = [
      ...this.nodes.all().filter((n) => !n.answering),
      ...results.filter((r) => !r.ok).map((r) => r.node),
    ];
    if (silent.length > 0) {
      throw new HoldfastError(
        'BACKEND_UNAVAILABLE',
        `redis-acl: ${[...new Set(silent.map((n) => `${n.address} (${n.why ?? 'does not answer'})`))].join(', ')} cannot be asked`,
      );
    }
  }

  /** The logins under `prefix` this provider made, on any node (a login made on one replica alone is listed too). */
  async list(prefix: string, { signal }: CallOptions, claimed?: ReadonlySet<string>): Promise<string[]> {
    const byNode = await this.listByNode(prefix, { signal }, claimed);
    return [...new Set([...byNode.values()].flat())].sort();
  }

  /** {@link list}, per node (`host:port` → logins). */
  async listByNode(
    prefix: string,
    { signal }: CallOptions,
    claimed?: ReadonlySet<string>,
  ): Promise<Map<string, string[]>> {
    const results = await this.onEvery(signal, (node, s) => node.acl.list(prefix, { signal: s }, claimed));
    // a replica's masteruser is never an orphan, even where it carries this provider's mark
    const ours = (logins: string[]) => logins.filter((login) => this.nodes.masterUserReason(login) === undefined);
    return new Map(this.answeredSomewhere(results, signal).map((r) => [r.node.address, ours(r.value)]));
  }

  /** Every answering node's failed logins since its last read (`ACL LOG` per node: ACL users are per node). */
  async failedLogins({ signal }: CallOptions): Promise<FailedLoginsRead> {
    const results = await this.onEvery(signal, (node, s) => node.acl.failedLogins({ signal: s }));
    const reads = this.answeredSomewhere(results, signal).map((r) => r.value);
    return {
      failures: reads.flatMap((r) => r.failures),
      nodes: reads.flatMap((r) => r.nodes),
      lost: reads.flatMap((r) => r.lost),
    };
  }

  /** {@link RedisAclAdapter.openConnections} on every node that answers, each connection with its node. */
  async openConnections(logins: ReadonlySet<string>, { signal }: CallOptions): Promise<LoginSession[]> {
    const results = await this.onEvery(signal, (node, s) => node.acl.openConnections(logins, { signal: s }));
    return this.answeredSomewhere(results, signal).flatMap((r) =>
      r.value.map((session) => ({ ...session, node: r.node.address })),
    );
  }

  close(): Promise<void> {
    return this.nodes.close();
  }

  /** The line of `node`'s light checks, and its words for one that waited past its deadline. */
  private probeOf(node: RedisNode): { calls: BackendCalls; line: ProbeLine } {
    let probe = this.probes.get(node);
    if (probe === undefined) {
      probe = {
        calls: new BackendCalls({ adapter: 'redis-acl', where: node.address, answered: () => false }),
        line: new ProbeLine(AUTH_IN_FLIGHT, () => node.acl.probeAuthenticated),
      };
      this.probes.set(node, probe);
      if (this.probes.size > 4 * this.nodes.all().length + 16) {
        for (const known of this.probes.keys()) if (!this.nodes.all().includes(known)) this.probes.delete(known);
      }
    }
    return probe;
  }

  /**
   * Runs `call` on every answering node at once, each under the call's deadline and its node's
   * own (a node found not answering meanwhile is given up on). A node that fails as if it
   * could not be reached is pinged at once.
   */
  private async onEvery<T>(
    signal: AbortSignal,
    call: (node: RedisNode, signal: AbortSignal) => Promise<T>,
  ): Promise<Array<NodeResult<T>>> {
    await this.nodes.first;
    const every = this.nodes.all();
    if (every.length === 1) {
      // one node: asked as the one-node adapter always was (a hang is the check's deadline, a refusal its own error)
      const node = every[0]!;
      try {
        return [{ node, ok: true, value: await call(node, signal) }];
      } catch (error) {
        return [{ node, ok: false, error }];
      }
    }
    const answering = this.nodes.answering();
    // none answers by the last ping: every node is asked anyway (each fails fast while its connection is down), so that
    // a
    // backend back up answers at once, not at the next ping
    const nodes = answering.length > 0 ? answering : this.nodes.all();
    const nodeSignals = new Map<RedisNode, AbortSignal>();
    return Promise.all(
      nodes.map(async (node): Promise<NodeResult<T>> => {
        try {
          // a node found not answering meanwhile is given up on; with none answering, each is given the node timeout
          const giveUp = answering.length > 0 ? node.gone.signal : AbortSignal.timeout(this.nodes.nodeTimeoutMs);
          nodeSignals.set(node, giveUp);
          const value = await call(node, AbortSignal.any([signal, giveUp]));
          if (!node.answering) this.nodes.suspect(node); // it answered: the ping says so now
          return { node, ok: true, value };
        } catch (error) {
          if (!signal.aborted && nodeSignals.get(node)?.aborted === true) {
            // found not answering meanwhile: the node's problem, said by the node set
            return {
              node,
              ok: false,
              error: new HoldfastError(
                'BACKEND_UNAVAILABLE',
                `redis-acl: node ${node.address} cannot be asked: ${node.why ?? 'it does not answer'}`,
              ),
            };
          }
          if (!signal.aborted && !isHoldfastError(error, 'BACKEND_REFUSED')) this.nodes.suspect(node);
          return { node, ok: false, error };
        }
      }),
    );
  }

  /**
   * The answers of the nodes that answered. The call's own deadline is the caller's; when no
   * node answered, the first node's error (or that none is known to answer) is thrown: could not ask.
   */
  private answeredSomewhere<T>(
    results: Array<NodeResult<T>>,
    signal: AbortSignal,
  ): Array<{ node: RedisNode; value: T }> {
    if (signal.aborted)
      throw new HoldfastError('DEADLINE_EXCEEDED', 'redis-acl: the call did not finish before its deadline');
    const answered: Array<{ node: RedisNode; value: T }> = [];
    for (const r of results) if (r.ok) answered.push({ node: r.node, value: r.value }); // every call of a heal: no flatMap
    if (answered.length > 0) return answered;
    const failed = results.find((r) => !r.ok);
    if (failed && !failed.ok) throw failed.error;
    const known = this.nodes.report();
    throw new HoldfastError(
      'BACKEND_UNAVAILABLE',
      `redis-acl: no node of the backend answers (${known.map((n) => `${n.address}: ${n.why ?? 'unknown'}`).join('; ') || 'none known'})`,
    );
  }
}
