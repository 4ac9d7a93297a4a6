/**
 * The engine on a Redis under Sentinel (a master, two replicas, three Sentinels,
 * `down-after-milliseconds 1000`), configured with `admin: { sentinels, master }`: every consumer
 * authenticates on every node; kill -9 of the master: every consumer authenticates on the new
 * master and the remaining replica within verifyEvery + 10 s; the old master, restarted empty as
 * a replica, is healed there within verifyEvery + 10 s, and the log names the node.
 */
import { describe, expect, it } from 'vitest';
import { ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import { nodeAddress, SENTINEL_MASTER, type NodeAddress } from '../../backends/redis-replicas.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';

async function everyoneOn(nodes: NodeAddress[], consumers: Consumer[]): Promise<boolean> {
  for (const node of nodes) {
    for (const c of consumers) if (!(await redisLogin(node, c.login, c.password).catch(() => false))) return false;
  }
  return true;
}

describe('the engine on Redis under Sentinel', () => {
  const fixture = engineFixtures();

  it('holds every consumer on every node, follows a kill -9 failover, and heals the old master restarted empty there', async () => {
    const set = await ownRedisReplicas({ replicas: 2, sentinels: 3, downAfterMs: 1_000 });
    const verifyEveryMs = 3_000;
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      adminLines: [`sentinels: [${set.sentinelUrls.join(', ')}]`, `master: ${SENTINEL_MASTER}`],
      consumers: 12,
      timing: { verifyEvery: '3s', checkTimeout: '3s' },
    });
    await f.startHeld();
    expect(await everyoneOn(set.nodes, f.consumers)).toBe(true);

    const old = await set.currentMaster();
    set.kill(old);
    const killedAt = Date.now();
    const promoted = await set.waitForNewMaster(old);
    const promotedAt = Date.now();
    const remaining = set.nodes.filter((n) => nodeAddress(n) !== nodeAddress(old));
    await f.until(
      'every consumer on the new master and the other replica',
      () => everyoneOn(remaining, f.consumers),
      verifyEveryMs + 10_000,
    );
    const backAt = Date.now();

    await set.restartEmpty(old);
    const restartedAt = Date.now();
    await f.until(
      'every consumer on the old master, back as a replica',
      () => everyoneOn([old], f.consumers),
      verifyEveryMs + 10_000,
    );
    const rejoinedAt = Date.now();
    await f.until('every consumer held', () => f.allHeld(), verifyEveryMs + 10_000);

    const messages = f.logs.map((l) => l.msg);
    // the failover, said once; on a loaded machine the Sentinels may fail over again (a master slow for 1 s is down to
    // them): each later one is said once too, as a chain that ends at the master the Sentinels name now
    const failovers = messages.filter((m) => m.startsWith('failover:'));
    expect(failovers[0]).toBe(
      `failover: the master is ${nodeAddress(promoted)} now (was ${nodeAddress(old)}); every consumer is checked there`,
    );
    const chain = failovers.map(
      (m) => /^failover: the master is (\S+) now \(was (\S+)\)/.exec(m)!.slice(1, 3) as [string, string],
    );
    chain
      .slice(1)
      .forEach(([, was], i) => expect(was, `failover ${i + 2} follows failover ${i + 1}`).toBe(chain[i]![0]));
    expect(chain.at(-1)![0]).toBe(nodeAddress(await set.currentMaster()));
    // said once per outage: the old master cannot be asked, then it answers again or joins again (a node the Sentinels
    // forgot and list again); loading its replica's sync it may stop answering again, said only after it was back
    const at = `node ${nodeAddress(old)} `;
    const kinds = messages.flatMap((m) =>
      m.startsWith(`${at}cannot be asked`)
        ? ['down']
        : m.startsWith(`${at}answers again`) || (m.startsWith(at) && m.includes(' joined the backend'))
          ? ['back']
          : [],
    );
    expect(kinds[0]).toBe('down');
    kinds
      .slice(1)
      .forEach((kind, i) =>
        expect(
          kind === 'down' && kinds[i] === 'down',
          `a second "cannot be asked" without a return between: ${kinds.join(' ')}`,
        ).toBe(false),
      );
    const healed = messages.filter(
      (m) => m.startsWith(`not held on ${nodeAddress(old)} (missing`) && m.endsWith('applying there now'),
    );
    expect(healed.length).toBeGreaterThanOrEqual(1);
    console.log(
      `[redis sentinel engine] ${f.consumers.length} consumers, verifyEvery 3 s: kill to promotion ${promotedAt - killedAt} ms; ` +
        `promotion to every consumer on the new master and the other replica ${backAt - promotedAt} ms; old master restarted empty to every consumer on it ${rejoinedAt - restartedAt} ms`,
    );
  }, 120_000);
});
