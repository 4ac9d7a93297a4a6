/**
 * The queue's Redis Cluster as this process sees it, for what a failover means to holdfast:
 *
 * - the master serving holdfast's slot (every key shares the prefix's hash tag) that stops
 *   answering is said once per outage, by name, and not once per job: a node said down is said
 *   again only after it was heard to answer (a PING), so a stale slot map that names it again
 *   during the failover says nothing;
 * - when another node that answers serves the slot (a replica promoted), that is said once, and `moved` is
 *   called: replication is asynchronous, so the promoted replica may lack the last jobs written
 *   before the failover, and the sweep re-creates whatever it lacks (its sentinel
 *   survived, so nothing else would notice).
 *
 * A single Redis is not watched here: its restart empty is the sentinel's to notice.
 */
import type { Cluster } from 'ioredis';
import type { Logger } from '../logging/logger.js';
import type { QueueRedis } from './bull-connection.js';

/** How long a node said down has to answer a PING before it counts as answering again. */
const PING_MS = 1_000;

export interface QueueWatchOptions {
  /** A key of holdfast's (the sentinel): its slot is the one watched. */
  key: string;
  logger: Logger;
}

export class QueueWatch {
  private slot: number | undefined;
  private owner: string | undefined;
  /** Nodes said not to answer, each until it is heard to answer again. */
  private readonly down = new Set<string>();
  private moved: () => unknown = () => undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: QueueWatchOptions,
  ) {
    cluster.on('node error', (error: Error, node: string) => this.nodeError(error, node));
    cluster.on('refresh', () => this.refreshed());
    cluster.on('ready', () => void this.learnSlot());
  }

  /** What to do when another node serves the slot (the sweep). */
  onMoved(moved: () => unknown): void {
    this.moved = moved;
  }

  private async learnSlot(): Promise<void> {
    if (this.slot !== undefined) return;
    try {
      this.slot = Number(await this.cluster.call('CLUSTER', 'KEYSLOT', this.options.key));
      this.owner = this.ownerNow();
    } catch {
      // asked again when the cluster is next ready
    }
  }

  private ownerNow(): string | undefined {
    return this.slot === undefined ? undefined : this.cluster.slots[this.slot]?.[0];
  }

  private nodeError(error: Error, node: string): void {
    if (node !== this.owner || this.down.has(node)) return;
    this.down.add(node);
    this.options.logger.warn(
      { node, slot: this.slot },
      `the queue's Redis node ${node}, the master serving holdfast's slot ${this.slot}, does not answer (${error.message}); checks wait until the cluster promotes its replica`,
    );
  }

  private refreshed(): void {
    const now = this.ownerNow();
    if (now === undefined) return;
    if (!this.down.has(now)) return this.follow(now);
    // a node said down, named by the slot map: followed only once it answers
    void this.answers(now).then((yes) => {
      if (!yes) return;
      this.down.delete(now);
      if (this.ownerNow() === now) this.follow(now);
    });
  }

  private follow(now: string): void {
    if (now === this.owner) return;
    const was = this.owner;
    this.owner = now;
    if (was === undefined) return;
    this.options.logger.warn(
      { node: now, was, slot: this.slot },
      `the queue's Redis slot ${this.slot} is now served by ${now} (was ${was}): a failover; re-creating any consumer's next step the new master lacks`,
    );
    void Promise.resolve()
      .then(this.moved)
      .catch(() => undefined);
  }

  /** Whether the node answers a PING within PING_MS. */
  private async answers(node: string): Promise<boolean> {
    const client = this.cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === node);
    if (!client) return false;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, PING_MS, false)));
    try {
      return await Promise.race([
        client.ping().then(
          () => true,
          () => false,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A watch of the queue's Redis when it is a cluster; undefined for a single Redis. */
export function watchQueue(redis: QueueRedis, options: QueueWatchOptions): QueueWatch | undefined {
  return redis.isCluster ? new QueueWatch(redis as Cluster, options) : undefined;
}
