/**
 * The nodes of one `redis-acl` backend, found and followed. Redis does not replicate ACL users,
 * so each node gets its own admin connection (a {@link RedisAclAdapter}, with its probe
 * connection). The set is found from the admin form:
 *
 * - `url`: that node, and every replica it lists in `INFO replication` (as announced);
 * - `sentinel`: the master the Sentinels name (`SENTINEL GET-MASTER-ADDR-BY-NAME`) and every
 *   replica they know (`SENTINEL REPLICAS`), answering or not; `+switch-master` is followed at once;
 * - `cluster`: every node `CLUSTER NODES` lists with an address (a node in handshake or without
 *   an address is said, and left out until it has one).
 *
 * With `nodes: only`, the named node(s) alone. The set is found again every `rediscoverEveryMs`
 * and at once when a node stops answering. Every node is pinged every `healthEveryMs`: one that
 * does not answer within `nodeTimeoutMs` is *not answering* (said once, naming it) and its
 * calls in flight are abandoned, so that the other nodes' answers stand; it answers again, and
 * that is said too. Once asked for ({@link RedisNodes.incarnations}), each ping that answers is
 * followed by an `INFO server`: the node's `run_id` (redis-run.ts), its incarnation; and so is each
 * connection of a node's admin made again, at once: a restart is told before the reconnected
 * connection can answer a check (which would find the logins gone first, a loss wave), not up to a
 * ping later.
 */
import { Redis } from 'ioredis';
import type { AdminConnection, AdminTopology, BackendNodeEvent, BackendNodeReport, Ownership } from '../adapter.js';
import { isHoldfastError } from '../../errors/holdfast-error.js';
import type { Incarnation, IncarnationChange, IncarnationSource } from '../incarnation.js';
import { IncarnationTracker } from '../incarnation-tracker.js';
import { failureCode } from '../incarnation-watch.js';
import { MissingLogins } from './missing-logins.js';
import { RedisAclAdapter, type RedisAclAdapterOptions } from './redis-acl-adapter.js';
import { redisRunOf } from './redis-run.js';

import type { NodeRole } from './redis-run.js';

export type { NodeRole };

/** One node of the set, as the adapter uses it. */
export interface RedisNode {
  /** `host:port`. */
  readonly address: string;
  role: NodeRole;
  readonly acl: RedisAclAdapter;
  /** Whether its last ping answered (true until a ping says otherwise). */
  answering: boolean;
  /** Why it does not answer, when it does not. */
  why: string | undefined;
  /** When it was found not answering (ms since the epoch), when it does not. */
  downSince: number | undefined;
  /** Aborts when the node is found not answering: its calls in flight give up. */
  gone: AbortController;
  /** The consumers it lacks now, as the checks and applies found them. */
  readonly missing: MissingLogins;
}

/** A node as a status or a test sees it. */
export type NodeReport = BackendNodeReport;

/** Something about the nodes worth a log line: said once per change. */
export type NodeEvent = BackendNodeEvent;

export interface RedisNodesOptions {
  /** How often the node set is found again (default 5 s; at least every `verifyEvery` is the promise). */
  rediscoverEveryMs?: number;
  /** How often every node is pinged (default 1 s). */
  healthEveryMs?: number;
  /** A node that does not answer a ping within this is not answering (default 5 s). */
  nodeTimeoutMs?: number;
  /** Options for each node's adapter. */
  node?: RedisAclAdapterOptions;
  /**
   * A node's missing consumer not confirmed missing within this is forgotten (default 5 min; see {@link
   * MissingLogins}).
   */
  missingTtlMs?: number;
}

interface Found {
  nodes: Array<{ address: string; role: NodeRole }>;
  /** The master, where the form names one. */
  master?: string | undefined;
  /** What discovery noticed and left out (a cluster node in handshake, without an address). */
  notes?: string[];
}

/** `host:port` of a `redis://` URL. */
export function addressOfUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

function urlOf(scheme: string, address: string): string {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return `${scheme}//${host.includes(':') ? `[${host}]` : host}:${address.slice(colon + 1)}`;
}

/** The replicas `INFO replication` of a master lists: `slave0:ip=10.0.0.6,port=6379,state=online,…`. */
export function replicasOfInfo(info: string): string[] {
  return info
    .split(/\r?\n/)
    .filter((line) => /^slave\d+:/.test(line))
    .flatMap((line) => {
      const ip = /ip=([^,]+)/.exec(line)?.[1];
      const port = /port=(\d+)/.exec(line)?.[1];
      return ip && port ? [`${ip}:${port}`] : [];
    });
}

/** The nodes `CLUSTER NODES` lists, and why any is left out. */
export function clusterNodesOf(text: string): Found {
  const nodes: Found['nodes'] = [];
  const notes: string[] = [];
  for (const line of text.trim().split('\n').filter(Boolean)) {
    const [id, address, flags] = line.split(' ');
    const hostPort = address?.split('@')[0]?.split(',')[0] ?? '';
    const flagList = (flags ?? '').split(',');
    if (flagList.includes('noaddr') || /^:?0?$/.test(hostPort) || hostPort.startsWith(':')) {
      notes.push(`cluster node ${id ?? '?'} has no address yet: left out until it has one`);
      continue;
    }
    if (flagList.includes('handshake')) {
      notes.push(`cluster node ${hostPort} is in handshake: left out until it has joined`);
      continue;
    }
    nodes.push({ address: hostPort, role: flagList.includes('master') ? 'master' : 'replica' });
  }
  return { nodes, notes };
}

/** A Sentinel reply's flat `[field, value, …]` list as a record. */
function fields(reply: unknown): Record<string, string> {
  const list = Array.isArray(reply) ? reply.map(String) : [];
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]!] = list[i + 1]!;
  return out;
}

export class RedisNodes implements IncarnationSource {
  private readonly nodes = new Map<string, RedisNode>();
  private readonly scheme: string;
  private readonly sentinels: Redis[] = [];
  private readonly subscribers: Redis[] = [];
  private discovering: Promise<void> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private master: string | undefined;
  private readonly listeners = new Set<(event: NodeEvent) => void>();
  private readonly said = new Set<string>();
  /** Each node's `masteruser` (node address → login), where it has one. */
  private readonly masterUsers = new Map<string, string>();
  private closed = false;
  /** Each node's run, read at each ping once {@link incarnations} or {@link onIncarnation} was called. */
  private readonly runs = new IncarnationTracker();
  private runsWatched = false;
  /** The first discovery: calls made meanwhile wait for it. */
  readonly first: Promise<void>;
  /** A node that does not answer within this is not answering. */
  readonly nodeTimeoutMs: number;

  constructor(
    private readonly admin: AdminConnection,
    private readonly topology: AdminTopology,
    private readonly ownership: Ownership,
    private readonly options: RedisNodesOptions = {},
  ) {
    this.scheme = new URL(admin.url).protocol;
    this.nodeTimeoutMs = options.nodeTimeoutMs ?? 5_000;
    // the named nodes first: calls before discovery answers go there
    const named =
      topology.form === 'cluster'
        ? topology.seeds.map(addressOfUrl)
        : topology.form === 'url'
          ? [addressOfUrl(admin.url)]
          : [];
    for (const address of named) this.add(address, 'node');
    if (topology.form === 'sentinel') this.connectSentinels(topology);
    this.first = this.discover();
    this.timers.push(setInterval(() => void this.discover(), options.rediscoverEveryMs ?? 5_000).unref());
    this.timers.push(setInterval(() => void this.checkHealth(), options.healthEveryMs ?? 1_000).unref());
  }

  /** Every node now (answering or not). */
  all(): RedisNode[] {
    return [...this.nodes.values()];
  }

  /** The nodes that answer now. */
  answering(): RedisNode[] {
    return this.all().filter((n) => n.answering);
  }

  report(): NodeReport[] {
    return this.all().map((n) => {
      const { missing } = n.missing.count();
      const missingWhy = missing > 0 ? n.missing.why() : undefined;
      return {
        address: n.address,
        role: n.role,
        answering: n.answering,
        ...(n.why !== undefined ? { why: n.why } : {}),
        ...(n.downSince !== undefined ? { since: new Date(n.downSince).toISOString() } : {}),
        ...(missing > 0 ? { missing } : {}),
        ...(missingWhy !== undefined ? { missingWhy } : {}),
      };
    });
  }

  incarnations(): ReadonlyMap<string, Incarnation> {
    this.watchRuns();
    return this.runs.incarnations();
  }

  onIncarnation(listener: (change: IncarnationChange) => void): () => void {
    this.watchRuns();
    return this.runs.onIncarnation(listener);
  }

  onEvent(listener: (event: NodeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A call on `node` failed as if it could not be reached: ping it now rather than at the next round. */
  suspect(node: RedisNode): void {
    void this.ping(node);
  }

  /**
   * Why `login` is no consumer's on this backend: it is the `masteruser` of a node (the login a
   * replica authenticates to its master with, the operator's), as last read; undefined when not.
   */
  masterUserReason(login: string): string | undefined {
    for (const [address, user] of this.masterUsers) {
      if (user !== login) continue;
      const role = this.nodes.get(address)?.role;
      return `is the masteruser of ${role === 'master' ? 'node' : 'replica'} ${address}${role === 'master' ? ' (the master now; it replicates with it when it is a replica again)' : ''}`;
    }
    return undefined;
  }

  /** Finds the node set again (callers at once share one discovery). */
  discover(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.discovering ??= this.find()
      .then((found) => this.apply(found))
      .then(() => this.readMasterUsers())
      .catch((error: unknown) =>
        this.say(
          'warn',
          `the nodes of the backend could not be found again: ${error instanceof Error ? error.message : String(error)}; the ones known stay`,
          undefined,
          'discovery',
        ),
      )
      .finally(() => {
        this.discovering = undefined;
      });
    return this.discovering;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const client of [...this.sentinels, ...this.subscribers]) client.disconnect();
    await Promise.all(this.all().map((n) => n.acl.close()));
    this.nodes.clear();
  }

  private async find(): Promise<Found> {
    const signal = AbortSignal.timeout(this.nodeTimeoutMs);
    const { topology } = this;
    if (topology.form === 'sentinel') return this.fromSentinels(topology.master, topology.nodes === 'only');
    if (topology.form === 'cluster') {
      if (topology.nodes === 'only')
        return { nodes: topology.seeds.map((url) => ({ address: addressOfUrl(url), role: 'node' as const })) };
      return clusterNodesOf(String(await this.askAny(signal, 'CLUSTER', 'NODES')));
    }
    const address = addressOfUrl(this.admin.url);
    if (topology.nodes === 'only') return { nodes: [{ address, role: 'node' }] };
    const named = this.nodes.get(address)!;
    const info = String(await named.acl.command(signal, 'INFO', 'replication'));
    const role = /role:master/.test(info) ? 'master' : 'replica';
    return {
      nodes: [{ address, role }, ...replicasOfInfo(info).map((a) => ({ address: a, role: 'replica' as const }))],
      ...(role === 'master' ? { master: address } : {}),
    };
  }

  /** The first node that answers `command`, the answering ones first. */
  private async askAny(signal: AbortSignal, ...command: [string, ...string[]]): Promise<unknown> {
    let last: unknown = new Error('no node is known');
    for (const node of [...this.answering(), ...this.all().filter((n) => !n.answering)]) {
      try {
        return await node.acl.command(signal, ...command);
      } catch (error) {
        last = error;
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  private async fromSentinels(master: string, only: boolean): Promise<Found> {
    let last: unknown;
    for (const sentinel of this.sentinels) {
      try {
        const [addr, replicas] = await Promise.all([
          sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', master),
          only ? Promise.resolve([]) : sentinel.call('SENTINEL', 'REPLICAS', master),
        ]);
        if (!Array.isArray(addr))
          throw new Error(
            `Sentinel ${sentinel.options.host}:${sentinel.options.port} does not know the master "${master}"`,
          );
        const masterAddress = `${String(addr[0])}:${String(addr[1])}`;
        const nodes: Found['nodes'] = [{ address: masterAddress, role: 'master' }];
        for (const reply of Array.isArray(replicas) ? replicas : []) {
          const replica = fields(reply);
          if (replica.ip && replica.port) nodes.push({ address: `${replica.ip}:${replica.port}`, role: 'replica' });
        }
        return { nodes, master: masterAddress };
      } catch (error) {
        last = error;
      }
    }
    throw new Error(`no Sentinel answers: ${last instanceof Error ? last.message : String(last)}`);
  }

  /**
   * Each answering node's `masteruser` (`CONFIG GET masteruser`), read at each discovery: the
   * login it replicates with is never a consumer's. A node that will not say (NOPERM, `CONFIG`
   * renamed away) is said once, and what was known of it stays; one that cannot be reached keeps
   * what was known too.
   */
  private async readMasterUsers(): Promise<void> {
    if (this.closed) return;
    const deadline = AbortSignal.timeout(this.nodeTimeoutMs);
    await Promise.all(
      this.answering().map(async (node) => {
        try {
          // a node found not answering meanwhile is given up on at once
          const reply = await node.acl.command(
            AbortSignal.any([deadline, node.gone.signal]),
            'CONFIG',
            'GET',
            'masteruser',
          );
          const user = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : '';
          if (user !== '') this.masterUsers.set(node.address, user);
          else this.masterUsers.delete(node.address);
        } catch (error) {
          if (!isHoldfastError(error, 'BACKEND_ERROR')) return; // not reached: asked again at the next discovery
          const why = error instanceof Error ? error.message : String(error);
          this.say(
            'warn',
            `the masteruser of node ${node.address} cannot be read (${why}): a consumer claiming the login it replicates with is not refused there by holdfast; let the admin login run CONFIG GET`,
            node.address,
            `masteruser ${node.address}`,
          );
        }
      }),
    );
    for (const address of this.masterUsers.keys()) if (!this.nodes.has(address)) this.masterUsers.delete(address);
  }

  private apply(found: Found): void {
    if (this.closed) return;
    for (const note of found.notes ?? []) this.say('warn', note, undefined, note);
    if (found.master !== undefined && this.master !== undefined && found.master !== this.master) {
      this.say(
        'warn',
        `failover: the master is ${found.master} now (was ${this.master}); every consumer is checked there`,
        found.master,
      );
    }
    if (found.master !== undefined) this.master = found.master;
    const seen = new Set<string>();
    for (const { address, role } of found.nodes) {
      seen.add(address);
      const known = this.nodes.get(address);
      if (known) {
        known.role = role;
        continue;
      }
      this.add(address, role);
      if (this.said.has('discovered')) {
        // its first read tells the engine, which asks every consumer at once (held there too once applied)
        this.runs.joined(address);
        this.say(
          'info',
          `node ${address} (${role}) joined the backend: every consumer is asked and applied there`,
          address,
        );
      }
    }
    this.said.add('discovered');
    for (const node of this.all()) {
      if (seen.has(node.address)) continue;
      this.nodes.delete(node.address);
      this.runs.forget(node.address);
      node.gone.abort();
      void node.acl.close();
      this.say('info', `node ${node.address} is no longer part of the backend: not held there any more`, node.address);
    }
  }

  private add(address: string, role: NodeRole): RedisNode {
    const acl = new RedisAclAdapter({ ...this.admin, url: urlOf(this.scheme, address) }, this.ownership, {
      ...this.options.node,
      where: address,
    });
    const missing = new MissingLogins(this.options.missingTtlMs ?? 300_000);
    const node: RedisNode = {
      address,
      role,
      acl,
      answering: true,
      why: undefined,
      downSince: undefined,
      gone: new AbortController(),
      missing,
    };
    this.nodes.set(address, node);
    acl.onConnected(() => this.connected(node));
    return node;
  }

  /**
   * `node`'s admin connection was made (again): it answers (its ready check did), and its run is read now, the first
   * command on the new connection, so that a restart is told before a check on it finds the logins gone.
   */
  private connected(node: RedisNode): void {
    if (this.closed || this.nodes.get(node.address) !== node) return;
    if (!node.answering) this.answersAgain(node);
    if (this.runsWatched) void this.readRun(node);
  }

  /** `node`, found not answering before, answers again: its calls are made again, and that is said. */
  private answersAgain(node: RedisNode): void {
    node.answering = true;
    node.why = undefined;
    node.downSince = undefined;
    node.gone = new AbortController();
    if (this.nodes.size > 1)
      this.say('info', `node ${node.address} answers again: its consumers are checked and applied there`, node.address);
  }

  private connectSentinels(topology: Extract<AdminTopology, { form: 'sentinel' }>): void {
    const credentials = {
      ...(topology.sentinelUsername !== undefined ? { username: topology.sentinelUsername } : {}),
      ...(topology.sentinelPassword !== undefined ? { password: topology.sentinelPassword } : {}),
    };
    const common = {
      ...credentials,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: 5_000,
      retryStrategy: (n: number) => Math.min(100 * 2 ** n, 2_000),
    };
    for (const url of topology.sentinels) {
      const client = new Redis(url, common);
      client.on('error', () => undefined);
      this.sentinels.push(client);
      // +switch-master: a failover is followed at once, not at the next round
      const subscriber = new Redis(url, { ...common, enableOfflineQueue: true });
      subscriber.on('error', () => undefined);
      subscriber.on('message', (_channel: string, message: string) => {
        if (message.split(' ')[0] === topology.master) void this.discover();
      });
      void subscriber.subscribe('+switch-master').catch(() => undefined);
      this.subscribers.push(subscriber);
    }
  }

  /** From now on, each ping that answers reads the node's run; every node is read at once. */
  private watchRuns(): void {
    if (this.runsWatched) return;
    this.runsWatched = true;
    void this.checkHealth();
  }

  /**
   * `INFO server` on `node`, told to {@link runs}. A node that will not say (`INFO` not permitted) is read as a run
   * without id: only its answering again is seen.
   */
  private async readRun(node: RedisNode): Promise<void> {
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(this.nodeTimeoutMs), node.gone.signal]);
      const info = String(await node.acl.command(signal, 'INFO', 'server'));
      this.runs.answered(node.address, redisRunOf(info, node.role));
    } catch (error) {
      if (isHoldfastError(error, 'BACKEND_ERROR')) this.runs.answered(node.address, redisRunOf('', node.role));
      else this.lostTrack(node, error);
    }
  }

  /**
   * A read of `node` failed: its run watch hears that it did not answer, unless only a deadline passed on a connection
   * still open (a frozen node, or this process too busy to read the answer in time: under load, each such read would
   * be an `answers-again` event asking every consumer again, and steal a restart's). The same run answers after it, so
   * nothing was forgotten; a restart closes the connection, and the connection made again reads the new run.
   */
  private lostTrack(node: RedisNode, error: unknown): void {
    if (!isHoldfastError(error, 'DEADLINE_EXCEEDED')) this.runs.failed(node.address, failureCode(error));
  }

  private async checkHealth(): Promise<void> {
    await Promise.all(this.all().map((node) => this.ping(node)));
  }

  private readonly pinging = new Set<RedisNode>();

  private async ping(node: RedisNode): Promise<void> {
    if (this.pinging.has(node) || this.closed) return;
    this.pinging.add(node);
    try {
      await node.acl.ping({ signal: AbortSignal.timeout(this.nodeTimeoutMs) });
      if (!node.answering) this.answersAgain(node);
      if (this.runsWatched && this.nodes.get(node.address) === node) await this.readRun(node);
    } catch (error) {
      this.lostTrack(node, error);
      const why = error instanceof Error ? error.message : String(error);
      if (node.answering && this.nodes.get(node.address) === node) {
        node.answering = false;
        node.why = why;
        node.downSince = Date.now();
        node.gone.abort();
        // one node: its provider's checks say it (could not ask)
        if (this.nodes.size > 1)
          this.say(
            'warn',
            `node ${node.address} cannot be asked (${why}): a node problem, not a consumer loss; its consumers stay held on the nodes that answer`,
            node.address,
          );
        void this.discover(); // a failover, a node gone: found at once
      }
    } finally {
      this.pinging.delete(node);
    }
  }

  /** Tells the listeners; `once` (a key) makes a sentence said only once for the set's life. */
  private say(level: NodeEvent['level'], message: string, node?: string, once?: string): void {
    if (once !== undefined) {
      if (this.said.has(`once:${once}`)) return;
      this.said.add(`once:${once}`);
    }
    const event: NodeEvent = { level, message, ...(node !== undefined ? { node } : {}) };
    for (const listener of this.listeners) listener(event);
  }
}
