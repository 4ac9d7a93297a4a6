/**
 * A replica's `masteruser` (the login it authenticates to its master with, for replication) is
 * the operator's, never a consumer's: a contributions entry claiming it is refused with a clear
 * error, even on a provider that adopts logins, the login on the primary is left as it is (its
 * password still replicates) and none is made on the replica; it is never listed as an orphan.
 * Real servers: a primary and a replica configured with `masteruser repl` and its `masterauth`.
 * A node whose admin may not read its `masteruser` is said once, and held as any other.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BackendNodeEvent } from '../../../src/adapters/adapter.js';
import { redisAcl, RedisNodesAdapter } from '../../../src/adapters/redis-acl/index.js';
import { markSelector } from '../../../src/adapters/redis-acl/acl-mark.js';
import { ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { nodeAddress, type LocalRedisReplicas, type NodeAddress } from '../../backends/redis-replicas.js';
import { engineFixtures } from './engine-fixture.js';

/** Waits until `replica`'s link to `primary` is up and `primary` sees it replicate as `user`. */
async function replicatingAs(
  set: LocalRedisReplicas,
  primary: NodeAddress,
  replica: NodeAddress,
  user: string,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const link = await set.withNode(replica, (c) => c.info('replication')).catch(() => '');
    const clients = await set
      .withNode(primary, (c) => c.call('CLIENT', 'LIST', 'TYPE', 'replica') as Promise<string>)
      .catch(() => '');
    if (link.includes('master_link_status:up') && clients.includes(` user=${user} `)) return;
    if (Date.now() > deadline)
      throw new Error(`${nodeAddress(replica)} does not replicate as ${user}:\n${link}\n${clients}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("a replica's masteruser", () => {
  const fixture = engineFixtures();

  it("is no consumer's: claiming it is refused (adopt or not), the operator's login is left as it is and replication keeps working, and it is never an orphan", async () => {
    const set = await ownRedisReplicas({ replicas: 1 });
    const [primary, replica] = set.nodes as [NodeAddress, NodeAddress];
    const repl = { username: 'repl', password: randomBytes(12).toString('hex') };
    await set.withNode(primary, (c) =>
      c.call('ACL', 'SETUSER', repl.username, 'on', `>${repl.password}`, '+psync', '+replconf', '+ping'),
    );
    await set.withNode(replica, async (c) => {
      await c.call('CONFIG', 'SET', 'masteruser', repl.username);
      await c.call('CONFIG', 'SET', 'masterauth', repl.password);
      await c.call('CLIENT', 'KILL', 'TYPE', 'master');
    });
    await replicatingAs(set, primary, replica, repl.username);
    const before = await set.withNode(primary, (c) => c.call('ACL', 'GETUSER', repl.username));

    const f = await fixture({
      provider: set.endpoint(primary),
      consumers: 2,
      timing: { verifyEvery: '2s', checkTimeout: '2s' },
      providerLines: ['adopt: true'],
    });
    const [claimer, other] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];
    claimer.login = repl.username;
    f.writeContributions(f.consumers);
    await f.start();
    const reason = `"repl" is the masteruser of replica ${nodeAddress(replica)}`;
    await f.until(
      'the claim refused',
      async () =>
        (await f.status()).consumers.some(
          (c) => c.consumer === claimer.key && !c.healthy && (c.reason ?? '').includes(reason),
        ),
      60_000,
    );
    await f.until(
      'the other consumer held',
      async () => (await f.status()).consumers.some((c) => c.consumer === other.key && c.state === 'held'),
      30_000,
    );
    const refused = (await f.status()).consumers.find((c) => c.consumer === claimer.key)!;
    console.log(`[masteruser] ${claimer.key}: ${refused.label}: ${refused.reason ?? ''}`);
    expect(refused.reason).toContain('nothing was sent');

    // the operator's login as it was: same rules, its password still works; none made on the replica
    expect(await set.withNode(primary, (c) => c.call('ACL', 'GETUSER', repl.username))).toEqual(before);
    expect(await redisLogin(primary, repl.username, repl.password)).toBe(true);
    expect(await redisLogin(primary, repl.username, claimer.password)).toBe(false);
    expect(await set.withNode(replica, (c) => c.call('ACL', 'GETUSER', repl.username))).toBeNull();
    // replication authenticates with it still: its link dropped, it comes back up as repl
    await set.withNode(replica, (c) => c.call('CLIENT', 'KILL', 'TYPE', 'master'));
    await replicatingAs(set, primary, replica, repl.username);

    // never an orphan, even where it carries this provider's mark (made by holdfast before it became the masteruser)
    await set.withNode(primary, (c) => c.call('ACL', 'SETUSER', repl.username, markSelector('cache')));
    const adapter = redisAcl.connect({ url: set.url(primary), ...set.admin }, { provider: 'cache', adopt: true });
    try {
      const listed = await adapter.list!('', { signal: AbortSignal.timeout(10_000) });
      expect(listed).toContain(other.login);
      expect(listed).not.toContain(repl.username);
      // nor removed: a removal of it succeeds and leaves it
      await adapter.remove(repl.username, { signal: AbortSignal.timeout(10_000) });
      expect(await redisLogin(primary, repl.username, repl.password)).toBe(true);
    } finally {
      await adapter.close();
    }
  }, 150_000);

  it('is said once, as a warning, on a node whose admin may not read it, and the node is held as any other', async () => {
    const set = await ownRedisReplicas({ replicas: 1 });
    const [primary, replica] = set.nodes as [NodeAddress, NodeAddress];
    await set.withNode(replica, (c) => c.call('ACL', 'SETUSER', 'default', '-config|get'));
    const adapter = new RedisNodesAdapter(
      { url: set.url(primary), ...set.admin },
      { form: 'url', nodes: 'discover' },
      { provider: 'cache', adopt: false },
      { rediscoverEveryMs: 200 },
    );
    const events: BackendNodeEvent[] = [];
    adapter.onNodeEvent((e) => events.push(e));
    try {
      const grant = {
        login: `mu_${randomBytes(3).toString('hex')}`,
        password: randomBytes(16).toString('hex'),
        values: redisAcl.valuesSchema.parse({ keys: ['mu:*'] }),
      };
      await adapter.create(grant, { signal: AbortSignal.timeout(10_000) });
      for (const node of set.nodes) expect(await redisLogin(node, grant.login, grant.password)).toBe(true);
      await new Promise((r) => setTimeout(r, 1_500)); // several discoveries
      const said = events.filter((e) => e.message.includes('masteruser'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ level: 'warn', node: nodeAddress(replica) });
      expect(said[0]!.message).toContain('NOPERM');
    } finally {
      await adapter.close();
    }
  }, 60_000);
});
