/**
 * The three-node case's backend: a Redis primary with two replicas (the test harness's
 * {@link LocalRedisReplicas}, local `redis-server` processes in the world's run directory), and a
 * configuration whose provider names the primary alone (`admin: { url: <primary> }`, the default
 * `nodes: discover`): holdfast finds the replicas in its `INFO replication`. Every consumer is
 * applied on all three nodes by the adapter itself, and each node is seen to hold them all,
 * before anything is measured.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HoldfastConfig } from '../../src/config/config.js';
import { LocalRedisReplicas, nodeAddress, type NodeAddress } from '../backends/redis-replicas.js';
import { readSettings } from '../backends/settings.js';
import type { BenchEnv, TimingOverrides } from './bench-env.js';
import { applyLogins } from './seed.js';

export class ReplicaNodes {
  private constructor(
    private readonly set: LocalRedisReplicas,
    readonly config: { path: string; config: HoldfastConfig },
  ) {}

  /**
   * Starts the primary and its two replicas, writes `holdfast-<name>.yaml` for them, and holds every consumer on every
   * node.
   */
  static async start(env: BenchEnv, name: string, timing: TimingOverrides): Promise<ReplicaNodes> {
    const set = await LocalRedisReplicas.start(env.run, readSettings(), { replicas: 2 });
    try {
      writeFileSync(join(env.dir, `secrets/${name}`), set.admin.password, { mode: 0o600 });
      const admin = { url: set.url(set.nodes[0]!), username: set.admin.username, passwordFile: `secrets/${name}` };
      const nodes = new ReplicaNodes(set, await env.configure(name, timing, undefined, admin));
      // applied at the seed's pace: a saturating interval's node timeout (200 ms) is shorter than a ping takes while 64
      // applies run on a loaded machine
      await applyLogins(
        env,
        (await env.configure(`${name}-seed`, { verifyEvery: '60s' }, undefined, admin)).config.providers[0]!,
      );
      await nodes.holdEveryone(env);
      return nodes;
    } catch (error) {
      await set.stop();
      throw error;
    }
  }

  /** `host:port (role)` of each node: the primary first. */
  get names(): string[] {
    return this.set.nodes.map((n, i) => `${nodeAddress(n)} (${i === 0 ? 'primary' : 'replica'})`);
  }

  /** Each node's admin URL, with its credentials (for `INFO commandstats`). */
  get adminUrls(): string[] {
    const { username, password } = this.set.admin;
    return this.set.nodes.map(
      (n) => `redis://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${nodeAddress(n)}`,
    );
  }

  /** Throws unless every node lists every consumer's login within 10 s. */
  private async holdEveryone(env: BenchEnv): Promise<void> {
    const logins = new Set(env.consumers.map((c) => c.login));
    const held = (node: NodeAddress) =>
      this.set.withNode(
        node,
        async (c) => ((await c.call('ACL', 'USERS')) as string[]).filter((u) => logins.has(u)).length,
      );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const counts = await Promise.all(this.set.nodes.map(held));
      if (counts.every((n) => n === logins.size)) return;
      if (Date.now() > deadline)
        throw new Error(
          `not every consumer is held on every node: ${counts.map((n, i) => `${this.names[i]} ${n}/${logins.size}`).join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  stop(): Promise<void> {
    return this.set.stop();
  }
}
