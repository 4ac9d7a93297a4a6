/**
 * Heals in batches (issue 27, item 2): the consumers of one provider found not held at once are
 * confirmed, applied again and confirmed again together, in the batches the adapter declares
 * (Redis: one pipeline per node and kind of command). Each consumer's outcome is its own: one
 * whose apply is refused does not stop the others. What a user checks: every login
 * authenticates again, the server was sent exactly one `ACL SETUSER` per consumer it lacked
 * (`INFO commandstats`), and the batches (`holdfast_backend_batch_size`, the pipelines each node
 * was sent) carried many consumers each.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisNodesAdapter } from '../../../src/adapters/redis-acl/index.js';
import { connectAdapter } from '../../../src/config/config.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { ownBackend, ownRedisReplicas, type BackendEndpoint } from '../../backends/index.js';
import { nodeAddress, type LocalRedisReplicas, type NodeAddress } from '../../backends/redis-replicas.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';

/** `calls` of `acl|setuser` in the server's `INFO commandstats`: the consumers' own (holdfast makes no scratch user). */
async function setUserCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** How many of `consumers` authenticate on `node` now, asked with pipelined `AUTH`s. */
async function authenticating(node: { host: string; port: number }, consumers: readonly Consumer[]): Promise<number> {
  const redis = new Redis({
    host: node.host,
    port: node.port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const pipeline = redis.pipeline();
    for (const c of consumers) pipeline.call('AUTH', c.login, c.password);
    return ((await pipeline.exec()) ?? []).filter(([error]) => error === null).length;
  } catch {
    return 0;
  } finally {
    redis.disconnect();
  }
}

/** The sum and count of a provider's batches of `call` (`holdfast_backend_batch_size`). */
async function batches(metrics: Metrics, call: 'create' | 'holds'): Promise<{ sum: number; count: number }> {
  const lines = (await metrics.text()).split('\n').filter((l) => l.includes(`call="${call}"`));
  const value = (suffix: string) =>
    Number(
      lines
        .find((l) => l.startsWith(`holdfast_backend_batch_size_${suffix}{`))
        ?.split(' ')
        .at(-1) ?? 0,
    );
  return { sum: value('sum'), count: value('count') };
}

/** The engine started on an adapter this test can read (the pipelines each node was sent), with metrics. */
async function started(f: EngineFixture): Promise<{ adapter: RedisNodesAdapter; metrics: Metrics }> {
  const adapter = connectAdapter(f.config.providers[0]!) as RedisNodesAdapter;
  const metrics = new Metrics();
  await f.start(undefined, adapter, { metrics });
  await f.until('every consumer held and checked since its apply', () => f.settled(), 60_000);
  return { adapter, metrics };
}

/**
 * A consumer's login made by hand on the restarted server before the engine healed it: on a new
 * connection, `AUTH` as the consumer then `ACL SETUSER` of it, sent together (Redis runs them in
 * a row): refused `AUTH` means not healed yet, and the `ACL SETUSER` (run as the admin) made it;
 * an accepted one means healed already, and the `ACL SETUSER` (run as the consumer) is refused.
 */
async function madeByHand(provider: BackendEndpoint, consumers: readonly Consumer[]): Promise<Consumer> {
  for (const c of consumers.slice().reverse()) {
    const admin = new Redis(provider.url);
    try {
      const replies =
        (await admin
          .pipeline()
          .call('AUTH', c.login, c.password)
          .call('ACL', 'SETUSER', c.login, 'on', '>someone-else')
          .exec()) ?? [];
      if (replies[0]?.[0] && !replies[1]?.[0]) return c;
    } finally {
      admin.disconnect();
    }
  }
  throw new Error('every consumer was healed before one could be made by hand');
}

const pipelinesOf = (adapter: RedisNodesAdapter, address: string) =>
  adapter.nodes.all().find((n) => n.address === address)?.acl.pipelinesSent ?? 0;

describe('a heal in batches', () => {
  const fixture = engineFixtures();

  it('after the cache restarted empty: one ACL SETUSER per consumer, sent in pipelines of many; one consumer refused there does not stop the others', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({
      provider,
      consumers: 300,
      timing: { verifyEvery: '2s', checkTimeout: '2s' },
      sentinelEvery: '1h',
    });
    const { adapter, metrics } = await started(f);
    const address = `${provider.host}:${provider.port}`;

    // counted before the restart: under load the heal begins before the login below is made by hand
    const [creates, pipelines] = [await batches(metrics, 'create'), pipelinesOf(adapter, address)];
    await provider.restart();
    const admin = new Redis(provider.url);
    try {
      // one login made there by hand before its heal, not this provider's: its apply is refused, nothing sent for it
      const taken = await madeByHand(provider, f.consumers);
      const rest = f.consumers.filter((c) => c !== taken);

      await f.until(
        'every other login authenticating again',
        async () => (await authenticating(provider, rest)) === rest.length,
        3 * 2100 + 5_000,
      );
      await f.until(
        'the refused one said so',
        () => f.logsFor(taken).some((l) => String(l.msg).includes('lacks the mark')),
        10_000,
      );
      await new Promise((r) => setTimeout(r, 500)); // the last confirmations end

      // since the restart: exactly one ACL SETUSER per consumer the server lacked, none for the one refused (the
      // hand's: one)
      expect(await setUserCalls(admin)).toBe(rest.length + 1);
      expect(await authenticating(provider, [taken])).toBe(0);
      // the refusal was that consumer's alone: no other one was told of it, each healed at its first apply
      const toldOthers = rest.filter((c) => f.logsFor(c).some((l) => String(l.msg).includes('lacks the mark')));
      expect(toldOthers.map((c) => c.login)).toEqual([]);
      // applied in batches: more than one consumer per batch on average, in few pipelines (each batch: deep checks,
      // GETUSERs, SETUSERs, confirmations)
      const created = await batches(metrics, 'create');
      const sent = created.sum - creates.sum;
      const batched = created.count - creates.count;
      const round = pipelinesOf(adapter, address) - pipelines;
      console.log(`[batch heal] ${sent} applies in ${batched} batches; ${round} pipelines sent to the cache`);
      expect(sent).toBeGreaterThanOrEqual(rest.length);
      expect(batched).toBeLessThan(sent * 0.75);
      expect(round).toBeLessThanOrEqual(2 * rest.length);
    } finally {
      admin.disconnect();
    }
  }, 180_000);

  it('on a primary with two replicas, a replica restarted empty is healed there alone, in batches', async () => {
    const set: LocalRedisReplicas = await ownRedisReplicas({ replicas: 2 });
    try {
      const [primary, other, restarted] = set.nodes as [NodeAddress, NodeAddress, NodeAddress];
      const f = await fixture({
        provider: set.endpoint(primary),
        consumers: 200,
        timing: { verifyEvery: '2s', checkTimeout: '2s' },
        sentinelEvery: '1h',
      });
      const { adapter, metrics } = await started(f);
      await f.until('the three nodes found', () => adapter.nodes.all().length === 3, 20_000);
      const setUsers = (node: NodeAddress) => set.withNode(node, (c) => setUserCalls(c));

      // counted before the restart: under load the heal may begin before the replica is seen replicating again
      // (the restarted server counts its own commands from zero)
      const before = [await setUsers(primary), await setUsers(other), 0];
      const creates = await batches(metrics, 'create');
      await set.restartEmpty(restarted);
      await set.waitReplicating(primary, 2);
      const endpoint = (node: NodeAddress): BackendEndpoint => set.endpoint(node);
      await f.until(
        'every login authenticating on the restarted replica',
        async () => (await authenticating(endpoint(restarted), f.consumers)) === f.consumers.length,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 500));

      const after = [await setUsers(primary), await setUsers(other), await setUsers(restarted)];
      expect(after.map((n, i) => n - before[i]!)).toEqual([0, 0, f.consumers.length]);
      expect(await authenticating(endpoint(primary), f.consumers)).toBe(f.consumers.length);
      const created = await batches(metrics, 'create');
      console.log(
        `[batch heal] replica: ${created.sum - creates.sum} applies in ${created.count - creates.count} batches; ${nodeAddress(restarted)} healed alone`,
      );
      expect(created.count - creates.count).toBeLessThan((created.sum - creates.sum) * 0.75);
    } finally {
      await set.stop();
    }
  }, 180_000);
});
