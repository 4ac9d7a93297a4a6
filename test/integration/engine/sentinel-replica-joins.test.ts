/**
 * A replica added to a running Sentinel set (rule 11, rule 13): Redis does not replicate ACL users, so the new node
 * holds none of the logins. Once the Sentinels list it, holdfast's discovery finds it, the node event (`joined`) makes
 * every consumer suspect, and each login is put on it at once, long before the next interval (a minute): one
 * `ACL SETUSER` per consumer on the new node, none on the nodes that held them, no record written.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import {
  nodeAddress,
  SENTINEL_MASTER,
  type LocalRedisReplicas,
  type NodeAddress,
} from '../../backends/redis-replicas.js';
import { engineFixtures } from './engine-fixture.js';

const CONSUMERS = 40;

/** `ACL SETUSER` calls on `node` since its command stats were reset (or it started). */
function setUsers(set: LocalRedisReplicas, node: NodeAddress): Promise<number> {
  return set.withNode(node, async (c: Redis) => {
    const stats = await c.info('commandstats');
    return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  });
}

describe('a replica joining a running Sentinel set', () => {
  const fixture = engineFixtures();

  it("has every consumer's login put on it at once, each written once there and nowhere else (verifyEvery 60s)", async () => {
    const set = await ownRedisReplicas({ replicas: 1, sentinels: 3, downAfterMs: 5_000 });
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      adminLines: [`sentinels: [${set.sentinelUrls.join(', ')}]`, `master: ${SENTINEL_MASTER}`],
      consumers: CONSUMERS,
      timing: { verifyEvery: '60s', checkTimeout: '3s' },
    });
    const engine = await f.startHeld();
    await f.until('status healthy', async () => (await f.status()).healthy, 60_000);
    const before = [...set.nodes];
    for (const node of before) await set.withNode(node, (c) => c.config('RESETSTAT'));
    const revs = async () => new Map((await engine.store.list()).map((r) => [r._id, 'rev' in r ? r.rev : -1]));
    const revsBefore = await revs();

    const added = await set.addReplica();
    const at = nodeAddress(added);
    expect(await redisLogin(added, f.consumers[0]!.login, f.consumers[0]!.password).catch(() => false)).toBe(false);
    const listedAt = Date.now();
    const backMs = await f.until(
      'every consumer authenticating on the new replica',
      async () =>
        (await Promise.all(f.consumers.map((c) => redisLogin(added, c.login, c.password).catch(() => false)))).every(
          Boolean,
        ),
      45_000,
    );
    // found by discovery and said as a node event that asked every consumer at once
    const messages = f.logs.map((l) => l.msg);
    expect(messages).toContain(`node ${at} (replica) joined the backend: every consumer is asked and applied there`);
    expect(messages).toContain(
      `cache ${at} joined the backend (a node new to it): asking its ${CONSUMERS} consumers now`,
    );
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);

    // counted applies: one login written per consumer on the new replica, none on the nodes that held them
    expect(await setUsers(set, added)).toBe(CONSUMERS);
    for (const node of before) expect(await setUsers(set, node), nodeAddress(node)).toBe(0);
    for (const c of f.consumers) {
      const heals = f.logsFor(c).filter((l) => (l.time as number) >= listedAt && /^not held on /.test(l.msg));
      expect(heals.map((l) => l.msg)).toEqual([
        `not held on ${at} (missing: the backend has no such ACL user); applying there now`,
      ]);
    }
    // a heal of what the record says was applied is an event, not a write
    expect(await revs()).toEqual(revsBefore);
    console.log(
      `[sentinel replica joins] ${CONSUMERS} consumers on the new replica ${backMs} ms after every Sentinel listed it`,
    );
  }, 180_000);
});
