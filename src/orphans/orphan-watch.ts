/**
 * Orphans: logins on a provider's backend, under the provider's orphan prefix, that no consumer
 * claims. Where the adapter can list its logins, they are listed every `orphans.every`; a login
 * unclaimed on two listings in a row (not one a removal is about to take) is an orphan. Orphans
 * are reported (the status shows them, from the queue's Redis) and said when they change; they
 * are removed only when the provider's `orphans.remove` says so and its management is `manage`.
 * No listing is made while the record store does not answer.
 */
import type { Adapter } from '../adapters/adapter.js';
import type { ProviderConfig } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { Scrubber } from '../logging/scrubber.js';
import type { OrphanNotes } from '../queue/coordination.js';

export interface OrphanWatchOptions {
  providers: ReadonlyArray<{ config: ProviderConfig; adapter: Adapter }>;
  /** The logins a provider's consumers claim; undefined until its contributions were read. */
  claimed: (provider: string) => ReadonlySet<string> | undefined;
  coordination: { readonly notes: OrphanNotes };
  logger: Logger;
  scrubber: Scrubber;
  /** True while nothing may be asked of a backend (the record store does not answer). */
  paused: () => boolean;
  now: () => Date;
}

export class OrphanWatch {
  private readonly timers: NodeJS.Timeout[] = [];
  /** Per provider: the unclaimed logins of the last listing, and the orphans last said. */
  private readonly unclaimed = new Map<string, Set<string>>();
  private readonly said = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly options: OrphanWatchOptions) {}

  start(): void {
    for (const provider of this.options.providers) {
      const policy = provider.config.orphans;
      if (!policy) continue;
      if (!provider.adapter.list) {
        this.options.logger.warn(
          { provider: provider.config.name },
          `provider ${provider.config.name}: its ${provider.config.adapter.kind} adapter cannot list logins; orphans are not looked for`,
        );
        continue;
      }
      const timer = setInterval(() => {
        const pass = this.pass(provider).finally(() => this.running.delete(pass));
        this.running.add(pass);
      }, policy.everyMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await Promise.allSettled(this.running);
  }

  /** Lists one provider's logins and reports (or removes) its orphans. */
  async pass({ config, adapter }: { config: ProviderConfig; adapter: Adapter }): Promise<void> {
    const { logger, coordination, scrubber } = this.options;
    const policy = config.orphans;
    const claimed = this.options.claimed(config.name);
    if (!policy || !adapter.list || !claimed || this.options.paused()) return;
    const name = config.name;
    let listed: string[];
    /** Per node, on a backend of several: where each listed login is. */
    let where: LoginNodes | undefined;
    try {
      const options = within(config.timing.checkTimeoutMs);
      if (adapter.listByNode) {
        const byNode = await adapter.listByNode(policy.prefix, options, claimed);
        where = nodesOfLogins(byNode);
        listed = [...where.byLogin.keys()];
      } else listed = await adapter.list(policy.prefix, options, claimed);
    } catch (error) {
      logger.debug({ provider: name }, `could not list the logins of ${name} for orphans: ${scrubber.describe(error)}`);
      return;
    }
    const before = this.unclaimed.get(name) ?? new Set<string>();
    const unclaimed = new Set(listed.filter((login) => !claimed.has(login)));
    this.unclaimed.set(name, unclaimed);
    const orphans = [...unclaimed].filter((login) => before.has(login)).sort();

    if (policy.remove && config.management === 'manage') {
      for (const login of orphans) {
        try {
          await adapter.remove(login, within(config.timing.checkTimeoutMs));
          unclaimed.delete(login);
          logger.warn(
            { provider: name, login },
            `orphan login ${login} removed from ${name}: no consumer claims it (orphans.remove is set)`,
          );
        } catch (error) {
          logger.warn(
            { provider: name, login },
            `orphan login ${login} could not be removed from ${name}: ${scrubber.describe(error)}; tried again at the next listing`,
          );
        }
      }
    }
    const left = orphans.filter((login) => unclaimed.has(login));
    await coordination.notes.setOrphans(name, {
      at: this.options.now().toISOString(),
      prefix: policy.prefix,
      logins: left,
    });
    const words = left.map((login) => `${login}${onNodes(where, login)}`).join(', ');
    if (this.said.get(name) !== words) {
      if (left.length > 0) {
        logger.warn(
          { provider: name, orphans: left.length },
          `${left.length} login(s) on ${name} under "${policy.prefix}" that no consumer claims (orphans): ${words}`,
        );
      } else if (this.said.has(name)) logger.info({ provider: name }, `no orphans on ${name} any more`);
      this.said.set(name, words);
    }
  }
}

/** A call's options: its signal aborts after `ms`, and the deadline is said (a server may keep it too). */
function within(ms: number): { signal: AbortSignal; deadline: number } {
  return { signal: AbortSignal.timeout(ms), deadline: Date.now() + ms };
}

/** The nodes that answered a listing, and login → the nodes it is on. */
interface LoginNodes {
  nodes: number;
  byLogin: Map<string, string[]>;
}

function nodesOfLogins(byNode: ReadonlyMap<string, readonly string[]>): LoginNodes {
  const byLogin = new Map<string, string[]>();
  for (const [node, logins] of byNode)
    for (const login of logins) byLogin.set(login, [...(byLogin.get(login) ?? []), node]);
  return { nodes: byNode.size, byLogin };
}

/** ` (on 10.0.0.6:6379 only)`: where an orphan is, when the backend has several nodes and it is not on all of them. */
function onNodes(where: LoginNodes | undefined, login: string): string {
  const nodes = where?.byLogin.get(login) ?? [];
  return where === undefined || nodes.length === 0 || nodes.length === where.nodes
    ? ''
    : ` (on ${nodes.join(', ')} only)`;
}
