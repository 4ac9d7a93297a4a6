/**
 * The gauges `/metrics` sets when scraped, from its {@link ScrapeSources}: consumers by state,
 * the unserved consumers by name and since when, each provider's intervals (`verifyEvery`, deep check) and its last check,
 * orphans, contested consumers, removals held back, the queue's depth, and whether the record store and the queue's
 * Redis answer. Each source is read once per scrape within the scrape's deadline; one that does
 * not answer in time is said down (`holdfast_store_up`, `holdfast_queue_up`) and what it last
 * answered stays shown, so alerts on it neither hang the scraper nor resolve by themselves.
 */
import { Gauge, type Registry } from 'prom-client';
import { LatestRead } from './latest-read.js';
import type { QueueFacts, ScrapeSources, StoreFacts } from './scrape-sources.js';

/** Nodes per provider given a series of their own at most (a Cluster of 64 masters, each with replicas, fits). */
export const NODES_SHOWN = 256;

export class ScrapeGauges {
  private readonly consumers: Gauge<'provider' | 'state'>;
  private readonly unservedSince: Gauge<'provider' | 'consumer' | 'login' | 'state'>;
  private readonly brakeCount: Gauge<'provider' | 'consumer' | 'login'>;
  private readonly queueJobs: Gauge<'state'>;
  private readonly dueWaits: Gauge<'state'>;
  private readonly verifyEvery: Gauge<'provider'>;
  private readonly checkTimeout: Gauge<'provider'>;
  private readonly deepCheckEvery: Gauge<'provider'>;
  private readonly lastCheck: Gauge<'provider'>;
  private readonly orphans: Gauge<'provider'>;
  private readonly contested: Gauge<'provider'>;
  private readonly suspects: Gauge<'provider' | 'node'>;
  private readonly suspectEventAt: Gauge<'provider' | 'node' | 'why'>;
  private readonly suspectsAskedIn: Gauge<'provider' | 'node'>;
  private readonly heldRemovals: Gauge<'provider'>;
  private readonly backendNodes: Gauge<'provider' | 'role' | 'state'>;
  private readonly nodeMissing: Gauge<'provider' | 'node' | 'role'>;
  private readonly storeUp: Gauge;
  private readonly queueUp: Gauge;
  private reads: { queue: LatestRead<QueueFacts>; store: LatestRead<StoreFacts>; storeUp: () => boolean } | undefined;
  private providers: ScrapeSources['providers'] = [];

  constructor(registry: Registry) {
    const registers = [registry];
    const gauge = <T extends string>(name: string, help: string, labelNames: readonly T[]) =>
      new Gauge<T>({ name, help, labelNames, registers });
    this.consumers = gauge('holdfast_consumers', 'Consumers by provider and state', ['provider', 'state']);
    this.unservedSince = gauge(
      'holdfast_consumer_unserved_since_timestamp_seconds',
      'When each unserved consumer stopped being served (through every unserved state since), by provider, consumer, login and state now; the first 20 by name per provider and state',
      ['provider', 'consumer', 'login', 'state'],
    );
    this.brakeCount = gauge(
      'holdfast_consumer_brake_count',
      'Successful re-applies of an unserved consumer since it was last held (1: one heal its next check has not confirmed yet; the brake engaged from 2); named as for holdfast_consumer_unserved_since_timestamp_seconds',
      ['provider', 'consumer', 'login'],
    );
    this.queueJobs = gauge(
      'holdfast_queue_jobs',
      "Jobs in holdfast's queue by state (delayed: put back until later; waiting: due, not started); routine waits are in holdfast_due_waits",
      ['state'],
    );
    this.dueWaits = gauge(
      'holdfast_due_waits',
      "Every consumer's wait in the due set, taken by the workers' rounds (scheduled: all of them; due: fallen due and not taken yet)",
      ['state'],
    );
    this.verifyEvery = gauge(
      'holdfast_verify_interval_seconds',
      "Each provider's verify interval (verifyEvery), as configured in this process",
      ['provider'],
    );
    this.checkTimeout = gauge(
      'holdfast_check_timeout_seconds',
      "Each provider's check deadline (checkTimeout), as configured in this process",
      ['provider'],
    );
    this.deepCheckEvery = gauge(
      'holdfast_deep_check_interval_seconds',
      "Each provider's deep-check interval in force (rules compared): its deepCheckBudget shared by its consumers, between verifyEvery and deepCheckEvery",
      ['provider'],
    );
    this.lastCheck = gauge(
      'holdfast_last_check_timestamp_seconds',
      'When any consumer of the provider was last asked about (a check ended, or a consumer became held), by any worker',
      ['provider'],
    );
    this.orphans = gauge(
      'holdfast_orphan_logins',
      "Logins under the provider's orphan prefix that no consumer claims, as last listed",
      ['provider'],
    );
    this.contested = gauge(
      'holdfast_contested_consumers',
      "Consumers found changed outside holdfast (and put back) 3 times within the provider's contestedWindow, until a window passes without such a change: someone else manages them too",
      ['provider'],
    );
    this.suspects = gauge(
      'holdfast_suspect_consumers',
      "Consumers made suspect by a node event of the provider's backend (a node restarted, re-initialised, promoted, answering again, or a wave of logins found missing) and not asked since, by the node of its last event: asked now, red until none is",
      ['provider', 'node'],
    );
    this.suspectEventAt = gauge(
      'holdfast_suspect_event_timestamp_seconds',
      "When the provider's last node event that made its consumers suspect was seen (why: new-run-id, new-system-id, promoted, answers-again, joined, loss-wave)",
      ['provider', 'node', 'why'],
    );
    this.suspectsAskedIn = gauge(
      'holdfast_suspect_asked_seconds',
      "Seconds from the provider's last node event to all the consumers it made suspect asked again (absent while some are not)",
      ['provider', 'node'],
    );
    this.heldRemovals = gauge(
      'holdfast_removals_held_back',
      'Consumers a change of the contributions would remove, held back by the removal guard until confirmed (0: none)',
      ['provider'],
    );
    this.backendNodes = gauge(
      'holdfast_backend_nodes',
      "The nodes of each provider's backend (a primary and its replicas, Sentinel's, a Cluster's), by role and state (answering, not-answering), as this process's adapter sees them",
      ['provider', 'role', 'state'],
    );
    this.nodeMissing = gauge(
      'holdfast_backend_node_missing_consumers',
      "Consumers each answering node of a provider's backend of several lacks now, as this process's checks and applies found them " +
        `(a light check refused there, a deep check found them not held there, an apply there failed); the first ${NODES_SHOWN} nodes per provider`,
      ['provider', 'node', 'role'],
    );
    this.storeUp = new Gauge({
      name: 'holdfast_store_up',
      help: "1 while this process's watch of the record store gets an answer (pinged every second), else 0",
      registers,
    });
    this.queueUp = new Gauge({
      name: 'holdfast_queue_up',
      help: "1 when this scrape read the queue's Redis within its deadline, else 0 (the queue's gauges then show the last answer)",
      registers,
    });
  }

  /** Where the gauges read from (set once the engine runs); the static ones are set now. */
  readFrom(sources: ScrapeSources): void {
    this.providers = sources.providers;
    this.reads = {
      queue: new LatestRead(() => sources.queue()),
      store: new LatestRead(() => sources.store()),
      storeUp: () => sources.storeUp(),
    };
    for (const p of sources.providers) {
      this.verifyEvery.set({ provider: p.name }, p.verifyEveryMs / 1000);
      this.checkTimeout.set({ provider: p.name }, p.checkTimeoutMs / 1000);
    }
  }

  /** Reads every source (within `deadlineMs`) and sets the gauges; does nothing before {@link readFrom}. */
  async refresh(deadlineMs: number): Promise<void> {
    if (!this.reads) return;
    this.showNodes();
    const [queue, store] = await Promise.all([this.reads.queue.read(deadlineMs), this.reads.store.read(deadlineMs)]);
    this.queueUp.set(queue.fresh ? 1 : 0);
    this.storeUp.set(this.reads.storeUp() ? 1 : 0);
    if (queue.fresh && queue.value) this.showQueue(queue.value);
    if (store.value)
      for (const [provider, count] of store.value.heldRemovals) this.heldRemovals.set({ provider }, count);
  }

  private showQueue(facts: QueueFacts): void {
    this.consumers.reset();
    for (const { provider, state, count } of facts.consumers) this.consumers.set({ provider, state }, count);
    this.unservedSince.reset();
    this.brakeCount.reset();
    for (const c of facts.unserved) {
      this.unservedSince.set(
        { provider: c.provider, consumer: c.consumer, login: c.login, state: c.state },
        c.since / 1000,
      );
      if (c.brakeCount > 0)
        this.brakeCount.set({ provider: c.provider, consumer: c.consumer, login: c.login }, c.brakeCount);
    }
    for (const [state, count] of Object.entries(facts.queueDepth)) this.queueJobs.set({ state }, count);
    this.dueWaits.set({ state: 'scheduled' }, facts.dueWaits.scheduled);
    this.dueWaits.set({ state: 'due' }, facts.dueWaits.due);
    for (const [provider, at] of facts.lastCheckAt) this.lastCheck.set({ provider }, at / 1000);
    for (const [provider, count] of facts.orphans) this.orphans.set({ provider }, count);
    for (const [provider, count] of facts.contested) this.contested.set({ provider }, count);
    this.showSuspects(facts);
    this.showDeepChecks(facts);
  }

  /** Each provider's suspect consumers, by the node of its last event, when that was seen and how long all took. */
  private showSuspects(facts: QueueFacts): void {
    for (const gauge of [this.suspects, this.suspectEventAt, this.suspectsAskedIn]) gauge.reset();
    for (const [provider, { count, event }] of facts.suspects) {
      const node = event?.node ?? '';
      this.suspects.set({ provider, node }, count);
      if (!event) continue;
      const at = Date.parse(event.at);
      if (Number.isFinite(at)) this.suspectEventAt.set({ provider, node, why: event.why }, at / 1000);
      const asked = event.asked === undefined ? NaN : Date.parse(event.asked);
      if (Number.isFinite(at) && Number.isFinite(asked))
        this.suspectsAskedIn.set({ provider, node }, Math.max(0, asked - at) / 1000);
    }
  }

  /** Each provider's nodes by role and state (what its adapter knows in process: no I/O). */
  private showNodes(): void {
    this.backendNodes.reset();
    this.nodeMissing.reset();
    for (const p of this.providers) {
      if (!p.nodes) continue;
      const counts = new Map<string, { role: string; state: string; n: number }>();
      const nodes = p.nodes();
      // a node that does not answer is said by holdfast_backend_nodes (what it lacks is not known now)
      for (const node of nodes.slice(0, NODES_SHOWN))
        if (node.answering)
          this.nodeMissing.set({ provider: p.name, node: node.address, role: node.role }, node.missing ?? 0);
      for (const node of nodes) {
        const state = node.answering ? 'answering' : 'not-answering';
        const key = `${node.role} ${state}`;
        counts.set(key, { role: node.role, state, n: (counts.get(key)?.n ?? 0) + 1 });
      }
      for (const { role, state, n } of counts.values()) this.backendNodes.set({ provider: p.name, role, state }, n);
    }
  }

  /** Each provider's deep-check interval, for its consumers as counted in this scrape. */
  private showDeepChecks(facts: QueueFacts): void {
    for (const p of this.providers) {
      if (!p.deepCheckEveryMs) continue;
      const consumers = facts.consumers.reduce((n, c) => (c.provider === p.name ? n + c.count : n), 0);
      this.deepCheckEvery.set({ provider: p.name }, p.deepCheckEveryMs(consumers) / 1000);
    }
  }
}
