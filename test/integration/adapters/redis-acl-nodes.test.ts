/**
 * The `redis-acl` adapter on a backend of several nodes, against real servers: a primary with
 * two replicas (`--replicaof`), the same under three Sentinels, and a Redis Cluster of 3 masters
 * and 3 replicas. Redis does not replicate ACL users: every consumer must authenticate on every
 * node, a node that forgot is healed there alone, a node that cannot be asked is a node problem,
 * and a failover loses no one.
 *
 * The engine's routine is played by {@link checkRound}: light check, deep check when it does
 * not pass, create when not held, as `workers/effects.ts` does.
 */
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminTopology, BackendNodeEvent, Grant } from '../../../src/adapters/adapter.js';
import {
  redisAcl,
  RedisAclAdapter,
  RedisNodesAdapter,
  type RedisAclValues,
} from '../../../src/adapters/redis-acl/index.js';
import type { ProviderConfig } from '../../../src/config/config.js';
import type { Logger } from '../../../src/logging/logger.js';
import { Scrubber } from '../../../src/logging/scrubber.js';
import { OrphanWatch } from '../../../src/orphans/orphan-watch.js';
import { ownRedisCluster, ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import {
  addressOf,
  clusterMasters,
  clusterNodes,
  waitForClusterOk,
  withNode as withClusterNode,
  type ClusterNodeAddress,
} from '../../backends/redis-cluster.js';
import { nodeAddress, type LocalRedisReplicas, type NodeAddress } from '../../backends/redis-replicas.js';

const within = (ms = 10_000) => ({ signal: AbortSignal.timeout(ms) });
const FAST = { rediscoverEveryMs: 500, healthEveryMs: 200, nodeTimeoutMs: 1_000 };

function grantOf(login: string, values: Partial<RedisAclValues> = {}): Grant<RedisAclValues> {
  return {
    login,
    password: randomBytes(16).toString('hex'),
    values: redisAcl.valuesSchema.parse({ keys: [`${login}:*`], ...values }),
  };
}

function grants(
  prefix: string,
  count: number,
  values?: (login: string) => Partial<RedisAclValues>,
): Array<Grant<RedisAclValues>> {
  return Array.from({ length: count }, (_, i) => grantOf(`${prefix}${i}`, values?.(`${prefix}${i}`)));
}

/** How many of `all` authenticate on `node` now. */
async function authenticated(node: NodeAddress, all: Array<Grant<RedisAclValues>>): Promise<number> {
  const answers = await Promise.all(all.map((g) => redisLogin(node, g.login, g.password).catch(() => false)));
  return answers.filter(Boolean).length;
}

/** Waits until `value()` is `expected` (beforeAll may not use expect.poll). */
async function until<T>(value: () => T | Promise<T>, expected: T, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await value()) !== expected) {
    if (Date.now() > deadline) throw new Error(`still not ${String(expected)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `calls` of `acl|setuser` in a node's `INFO commandstats`. */
async function setUserCalls(set: LocalRedisReplicas, node: NodeAddress): Promise<number> {
  const info = await set.withNode(node, (c) => c.info('commandstats'));
  return Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

/**
 * One round of the engine's routine for each grant: light, then deep, then create where not held. Returns what was
 * said.
 */
async function checkRound(adapter: RedisNodesAdapter, all: Array<Grant<RedisAclValues>>): Promise<string[]> {
  const said: string[] = [];
  await Promise.all(
    all.map(async (grant) => {
      try {
        if (await adapter.authenticates(grant, within(5_000)).catch(() => false)) return;
        const answer = await adapter.holds(grant, within(5_000));
        if (answer.held) return;
        said.push(`${grant.login}: not held${answer.node ? ` on ${answer.node}` : ''} (${answer.reason})`);
        await adapter.create(grant, within(5_000));
      } catch (error) {
        said.push(`${grant.login}: could not ask: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  return said;
}

/** Runs check rounds until `done` says so; the time it took. */
async function roundsUntil(
  adapter: RedisNodesAdapter,
  all: Array<Grant<RedisAclValues>>,
  done: () => Promise<boolean>,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    await checkRound(adapter, all);
    if (await done()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function adapterOf(
  set: LocalRedisReplicas | { admin: { username: string; password: string } },
  url: string,
  topology: AdminTopology,
  provider: string,
  events: BackendNodeEvent[],
): RedisNodesAdapter {
  const adapter = new RedisNodesAdapter(
    { url, username: set.admin.username, password: set.admin.password },
    topology,
    { provider, adopt: false },
    FAST,
  );
  adapter.onNodeEvent((event) => events.push(event));
  return adapter;
}

describe('redis-acl on a primary with two replicas (no Sentinel)', () => {
  let set: LocalRedisReplicas;
  let adapter: RedisNodesAdapter;
  const events: BackendNodeEvent[] = [];
  const all = grants('rep_', 40);

  beforeAll(async () => {
    set = await ownRedisReplicas({ replicas: 2 });
    adapter = adapterOf(set, set.url(set.nodes[0]!), { form: 'url', nodes: 'discover' }, 'replicas', events);
    await until(() => adapter.nodeReport().length, 3);
  }, 60_000);
  afterAll(async () => {
    await adapter?.close();
    await set?.stop();
  });

  it('finds the replicas the primary lists, and holds every consumer on all three nodes', async () => {
    expect(
      adapter
        .nodeReport()
        .map((n) => `${n.address} ${n.role}`)
        .sort(),
    ).toEqual(
      [
        `${nodeAddress(set.nodes[0]!)} master`,
        `${nodeAddress(set.nodes[1]!)} replica`,
        `${nodeAddress(set.nodes[2]!)} replica`,
      ].sort(),
    );
    await Promise.all(all.map((g) => adapter.create(g, within())));
    for (const node of set.nodes) expect(await authenticated(node, all), nodeAddress(node)).toBe(all.length);
    expect(await Promise.all(all.map((g) => adapter.authenticates(g, within())))).toEqual(all.map(() => true));
    expect((await adapter.holds(all[0]!, within())).held).toBe(true);
  });

  it('heals a replica restarted empty there alone: no ACL SETUSER reaches the primary or the other replica for it', async () => {
    const [primary, other, restarted] = set.nodes as [NodeAddress, NodeAddress, NodeAddress];
    await set.restartEmpty(restarted);
    await set.waitReplicating(primary, 2);
    expect(await authenticated(restarted, all)).toBe(0);
    const before = [await setUserCalls(set, primary), await setUserCalls(set, other)];
    await expect
      .poll(async () => (await adapter.holds(all[0]!, within())) as unknown, { timeout: 10_000 })
      .toMatchObject({ held: false, reason: 'missing', node: nodeAddress(restarted) });
    const said = await checkRound(adapter, all);
    expect(said).toHaveLength(all.length);
    expect(said[0]).toMatch(new RegExp(`not held on ${nodeAddress(restarted).replace(/\./g, '\\.')} \\(missing\\)`));
    expect(await authenticated(restarted, all)).toBe(all.length);
    expect([await setUserCalls(set, primary), await setUserCalls(set, other)]).toEqual(before);
  });

  it('heals a replica restarted empty in batches, there alone: per node one pipeline of deep checks, one of ACL GETUSERs and one of ACL SETUSERs; a consumer refused there fails alone', async () => {
    const [primary, other, restarted] = set.nodes as [NodeAddress, NodeAddress, NodeAddress];
    await Promise.all(all.map((g) => adapter.create(g, within())));
    await set.restartEmpty(restarted);
    await set.waitReplicating(primary, 2);
    await expect
      .poll(async () => (await adapter.holds(all[1]!, within())) as unknown, { timeout: 10_000 })
      .toMatchObject({ held: false, node: nodeAddress(restarted) });
    // one login made there by hand, not this provider's: its apply is refused there, the others go on
    const [taken, ...rest] = all as [Grant<RedisAclValues>, ...Array<Grant<RedisAclValues>>];
    await set.withNode(restarted, (c) => c.call('ACL', 'SETUSER', taken.login, 'on', '>someone-else'));
    const pipelines = () => new Map(adapter.nodes.all().map((n) => [n.address, n.acl.pipelinesSent]));
    const before = pipelines();
    const setUsersBefore = [
      await setUserCalls(set, primary),
      await setUserCalls(set, other),
      await setUserCalls(set, restarted),
    ];

    const found = await adapter.holdsMany(all, within());
    expect(found.map((f) => f.ok && !f.value.held && f.value.node)).toEqual(all.map(() => nodeAddress(restarted)));
    const applied = await adapter.createMany(all, within());
    expect(applied.slice(1).every((a) => a.ok)).toBe(true);
    expect(applied[0]).toMatchObject({ ok: false, error: { code: 'BACKEND_REFUSED' } });

    expect(await authenticated(restarted, rest)).toBe(rest.length);
    // exactly one ACL SETUSER per consumer the restarted replica lacked (the hand-made one: none), none elsewhere
    const setUsersAfter = [
      await setUserCalls(set, primary),
      await setUserCalls(set, other),
      await setUserCalls(set, restarted),
    ];
    expect(setUsersAfter.map((n, i) => n - setUsersBefore[i]!)).toEqual([0, 0, rest.length]);
    // round trips bounded per node, whatever the number of consumers
    const after = pipelines();
    const sent = (node: NodeAddress) => after.get(nodeAddress(node))! - before.get(nodeAddress(node))!;
    expect([sent(primary), sent(other), sent(restarted)]).toEqual([2, 2, 3]);
    await set.withNode(restarted, (c) => c.call('ACL', 'DELUSER', taken.login));
    await adapter.create(taken, within());
  });

  it('a replica that cannot be asked (SIGSTOP) is a node problem, said once: nothing lost, nothing re-applied elsewhere, all held after SIGCONT', async () => {
    const [primary, frozen] = set.nodes as [NodeAddress, NodeAddress];
    const newcomer = grantOf('rep_new');
    const before = await setUserCalls(set, primary);
    events.length = 0;
    set.pause(frozen);
    try {
      // twice the node timeout, and more: every check answers from the nodes that do
      for (let round = 0; round < 3; round++) {
        const said = await checkRound(adapter, all);
        expect(said, `round ${round}`).toEqual([]);
        await new Promise((r) => setTimeout(r, 1_000));
      }
      await adapter.create(newcomer, within());
      expect(await setUserCalls(set, primary)).toBe(before + 1); // the newcomer only
      const cannot = events.filter((e) => e.level === 'warn' && e.node === nodeAddress(frozen));
      expect(cannot).toHaveLength(1);
      expect(cannot[0]!.message).toMatch(/cannot be asked.*a node problem, not a consumer loss/);
      expect(adapter.nodeReport().find((n) => n.address === nodeAddress(frozen))?.answering).toBe(false);
    } finally {
      set.resume(frozen);
    }
    await expect
      .poll(() => adapter.nodeReport().find((n) => n.address === nodeAddress(frozen))?.answering, { timeout: 10_000 })
      .toBe(true);
    await roundsUntil(
      adapter,
      [...all, newcomer],
      async () => (await authenticated(frozen, [...all, newcomer])) === all.length + 1,
      15_000,
    );
    expect(
      events.some((e) => e.level === 'info' && e.node === nodeAddress(frozen) && /answers again/.test(e.message)),
    ).toBe(true);
  }, 60_000);

  it('light checks of 2,000 consumers at once, most refused: bounded per probe connection, every answer false and none "could not ask"', async () => {
    // a fresh adapter: its probe connections have not authenticated yet, which is when Redis bounds them
    const fresh = adapterOf(set, set.url(set.nodes[0]!), { form: 'url', nodes: 'discover' }, 'replicas', []);
    try {
      await until(() => fresh.nodeReport().length, 3);
      const strangers = Array.from({ length: 2_000 }, (_, i) => ({ ...all[i % all.length]!, password: `wrong-${i}` }));
      const answers = await Promise.all(
        strangers.map((g) =>
          fresh.authenticates(g, within(30_000)).then(
            (ok) => String(ok),
            (error: unknown) => `threw: ${String(error)}`,
          ),
        ),
      );
      expect(answers.filter((a) => a !== 'false').slice(0, 3)).toEqual([]);
      expect(await fresh.authenticates(all[0]!, within())).toBe(true);
    } finally {
      await fresh.close();
    }
  }, 60_000);

  it('lists orphans per node: a login of the provider made by hand on one replica alone is reported there', async () => {
    const replica = set.nodes[2]!;
    const byHand = new RedisAclAdapter({ url: set.url(replica), ...set.admin }, { provider: 'replicas', adopt: false });
    const warned: string[] = [];
    try {
      await byHand.create(grantOf('rep_hand'), within());
      const logger = {
        warn: (_: unknown, message: string) => warned.push(message),
        info: () => undefined,
        debug: () => undefined,
      } as unknown as Logger;
      const config = {
        name: 'replicas',
        orphans: { prefix: 'rep_', everyMs: 60_000, remove: false },
        management: 'manage',
        timing: { checkTimeoutMs: 10_000 },
        adapter: redisAcl,
      } as unknown as ProviderConfig;
      const claimed = new Set([...all.map((g) => g.login), 'rep_new']);
      const watch = new OrphanWatch({
        providers: [{ config, adapter }],
        claimed: () => claimed,
        coordination: { notes: { setOrphans: () => Promise.resolve() } },
        logger,
        scrubber: new Scrubber([]),
        paused: () => false,
        now: () => new Date(),
      });
      // an orphan is unclaimed on two listings in a row
      await watch.pass({ config, adapter });
      await watch.pass({ config, adapter });
      expect(warned).toEqual([
        `1 login(s) on replicas under "rep_" that no consumer claims (orphans): rep_hand (on ${nodeAddress(replica)} only)`,
      ]);
    } finally {
      await byHand.remove('rep_hand', within());
      await byHand.close();
    }
  });

  it('with nodes: only, holds the named node alone', async () => {
    const only = adapterOf(set, set.url(set.nodes[0]!), { form: 'url', nodes: 'only' }, 'replicas', []);
    try {
      await only.ping(within());
      expect(only.nodeReport().map((n) => n.address)).toEqual([nodeAddress(set.nodes[0]!)]);
    } finally {
      await only.close();
    }
  });
});

describe('redis-acl under Sentinel: a master, two replicas, three Sentinels', () => {
  let set: LocalRedisReplicas;
  let adapter: RedisNodesAdapter;
  const events: BackendNodeEvent[] = [];
  const all = grants('sen_', 40);

  beforeAll(async () => {
    set = await ownRedisReplicas({ replicas: 2, sentinels: 3, downAfterMs: 1_000 });
    adapter = adapterOf(
      set,
      set.sentinelUrls[0]!,
      { form: 'sentinel', sentinels: set.sentinelUrls, master: 'mymaster', nodes: 'discover' },
      'sentinel',
      events,
    );
    await until(() => adapter.nodeReport().length, 3);
  }, 60_000);
  afterAll(async () => {
    await adapter?.close();
    await set?.stop();
  });

  it('holds every consumer on the master and both replicas; kill -9 of the master: every consumer authenticates on the new master and the other replica, the failover said once; the old master restarted empty is healed', async () => {
    await Promise.all(all.map((g) => adapter.create(g, within())));
    for (const node of set.nodes) expect(await authenticated(node, all), nodeAddress(node)).toBe(all.length);

    const old = await set.currentMaster();
    const killedAt = Date.now();
    set.kill(old);
    const promoted = await set.waitForNewMaster(old);
    const promotedAt = Date.now();
    const remaining = set.nodes.filter((n) => nodeAddress(n) !== nodeAddress(old));
    await roundsUntil(
      adapter,
      all,
      async () => (await Promise.all(remaining.map((n) => authenticated(n, all)))).every((n) => n === all.length),
      20_000,
    );
    const backAt = Date.now();
    await expect
      .poll(() => events.filter((e) => /failover/.test(e.message)).map((e) => e.message), { timeout: 10_000 })
      .toEqual([
        `failover: the master is ${nodeAddress(promoted)} now (was ${nodeAddress(old)}); every consumer is checked there`,
      ]);
    // not answering, or not listed (yet) by the Sentinels as a replica of the new master
    expect(adapter.nodeReport().find((n) => n.address === nodeAddress(old))?.answering).not.toBe(true);

    await set.restartEmpty(old);
    const restartedAt = Date.now();
    await roundsUntil(adapter, all, async () => (await authenticated(old, all)) === all.length, 30_000);
    const rejoinedAt = Date.now();
    expect(adapter.nodeReport().find((n) => n.address === nodeAddress(old))).toMatchObject({
      role: 'replica',
      answering: true,
    });
    console.log(
      `[redis-acl nodes] sentinel failover, ${all.length} consumers: kill to promotion ${promotedAt - killedAt} ms; ` +
        `promotion to every consumer authenticating on the new master and the other replica ${backAt - promotedAt} ms; ` +
        `old master restarted empty to every consumer back on it ${rejoinedAt - restartedAt} ms`,
    );
  }, 120_000);

  it('a replica killed is named not answering while the Sentinels list it, and leaves the node set once SENTINEL RESET forgets it', async () => {
    const master = await set.currentMaster();
    const victim = set.nodes.find((n) => nodeAddress(n) !== nodeAddress(master))!;
    set.kill(victim);
    const named = () => adapter.nodeReport().find((n) => n.address === nodeAddress(victim));
    await expect.poll(() => named()?.answering, { timeout: 15_000 }).toBe(false);
    // still listed by the Sentinels: still named, through several rediscoveries
    await new Promise((r) => setTimeout(r, 2_000));
    expect(named()).toMatchObject({ answering: false });
    await set.resetSentinels();
    await expect.poll(named, { timeout: 30_000, interval: 250 }).toBeUndefined();
    expect(adapter.nodeReport().every((n) => n.answering)).toBe(true);
  }, 60_000);
});

describe('redis-acl on a Redis Cluster of 3 masters and 3 replicas', () => {
  let endpoint: Awaited<ReturnType<typeof ownRedisCluster>>['endpoint'];
  let cluster: Awaited<ReturnType<typeof ownRedisCluster>>;
  let adapter: RedisNodesAdapter;
  const events: BackendNodeEvent[] = [];
  const all = grants('clu_', 12, () => ({ commands: ['+@read', '+@write', '+@connection', '-@dangerous'] }));

  beforeAll(async () => {
    cluster = await ownRedisCluster();
    endpoint = cluster.endpoint;
    adapter = adapterOf(
      endpoint,
      endpoint.urls[0]!,
      { form: 'cluster', seeds: endpoint.urls.slice(0, 1), nodes: 'discover' },
      'cluster',
      events,
    );
    await until(() => adapter.nodeReport().length, 6);
  }, 60_000);
  afterAll(async () => {
    await adapter?.close();
    await cluster?.stop();
  });

  it('every consumer authenticates on all six nodes and reads and writes its keys on every master through a cluster client', async () => {
    await Promise.all(all.map((g) => adapter.create(g, within())));
    for (const node of endpoint.nodes) expect(await authenticated(node, all), addressOf(node)).toBe(all.length);
    const masters = await clusterMasters(endpoint);
    expect(masters).toHaveLength(3);
    const grant = all[0]!;
    const client = new Cluster(endpoint.nodes, {
      redisOptions: { username: grant.login, password: grant.password },
      clusterRetryStrategy: () => null,
    });
    let lastError = 'none';
    client.on('error', (error: Error) => {
      lastError = error.message;
    });
    try {
      // a consumer without CLUSTER SLOTS / CLUSTER INFO never gets ready (NOPERM … 'cluster|slots'): said, not hung
      await Promise.race([
        client.ping(),
        new Promise((_, reject) =>
          setTimeout(
            () => reject(new Error(`the cluster client is not ready after 10 s; its last error: ${lastError}`)),
            10_000,
          ),
        ),
      ]);
      // keys in many slots: every master serves some
      const keys = Array.from({ length: 60 }, (_, i) => `${grant.login}:k${i}`);
      for (const key of keys) await client.set(key, key);
      for (const key of keys) expect(await client.get(key)).toBe(key);
      const perMaster = await Promise.all(masters.map((m) => nodeKeys(endpoint, m, `${grant.login}:*`)));
      expect(
        perMaster.every((n) => n > 0),
        `keys per master: ${perMaster.join(', ')}`,
      ).toBe(true);
      await expect(client.call('CLUSTER', 'NODES')).rejects.toThrow(/NOPERM/);
    } finally {
      client.disconnect();
    }
  });

  it('a master and a replica restarted with their cluster config kept but no ACL users: both hold every consumer again', async () => {
    // a master, and a replica of another master (the restarted master's slots stay served), once the node answering
    // knows both
    const pair = async () => {
      const nodes = await clusterNodes(endpoint);
      const master = nodes.find((n) => n.role === 'master' && n.slots.length > 0);
      const replica = nodes.find((n) => n.role === 'replica' && master !== undefined && n.masterId !== master.id);
      return master && replica ? { master, replica } : undefined;
    };
    await expect.poll(pair, { timeout: 10_000 }).toBeDefined();
    const { master, replica } = (await pair())!;
    await roundsUntil(
      adapter,
      all,
      async () => (await Promise.all(endpoint.nodes.map((n) => authenticated(n, all)))).every((n) => n === all.length),
      20_000,
    );
    await Promise.all([cluster.restart(master), cluster.restart(replica)]);
    const restartedAt = Date.now();
    for (const node of [master, replica])
      expect(await authenticated(node, all), `${addressOf(node)} right after its restart`).toBe(0);
    await roundsUntil(
      adapter,
      all,
      async () => (await Promise.all(endpoint.nodes.map((n) => authenticated(n, all)))).every((n) => n === all.length),
      20_000,
    );
    console.log(
      `[redis-acl nodes] cluster master and replica restarted without users: every consumer on both ${Date.now() - restartedAt} ms after`,
    );
    await waitForClusterOk(endpoint);
  }, 60_000);

  it('a master killed: its replica, promoted, holds every consumer', async () => {
    const victim = (await clusterMasters(endpoint))[0]!;
    cluster.kill(victim);
    const started = Date.now();
    await expect
      .poll(
        async () =>
          (await clusterNodes(endpoint).catch(() => [])).some(
            (n) =>
              n.role === 'master' &&
              n.masterId === null &&
              n.slots.some(([a]) => victim.slots.some(([b]) => a === b)) &&
              addressOf(n) !== addressOf(victim),
          ),
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);
    const promotedAfter = Date.now() - started;
    const live = endpoint.nodes.filter((n) => addressOf(n) !== addressOf(victim));
    await roundsUntil(
      adapter,
      all,
      async () => (await Promise.all(live.map((n) => authenticated(n, all)))).every((n) => n === all.length),
      20_000,
    );
    console.log(
      `[redis-acl nodes] cluster master killed: promotion after ${promotedAfter} ms; every consumer on every live node ${Date.now() - started} ms after the kill`,
    );
  }, 60_000);

  it('a node killed is named not answering while the cluster lists it, and leaves the node set once CLUSTER FORGET removes it', async () => {
    const listed = await clusterNodes(endpoint);
    const victim = listed.find((n) => n.role === 'replica' && !n.failing)!;
    cluster.kill(victim);
    const named = () => adapter.nodeReport().find((n) => n.address === addressOf(victim));
    await expect.poll(() => named()?.answering, { timeout: 15_000 }).toBe(false);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(named()).toMatchObject({ answering: false });
    // every live node forgets it (within a minute of each other, or gossip brings it back); a killed master of an
    // earlier test too
    const gone = listed.filter((n) => n.failing || addressOf(n) === addressOf(victim));
    const live = (await clusterNodes(endpoint)).filter((n) => !gone.some((g) => g.id === n.id) && !n.failing);
    for (const node of live)
      for (const g of gone) await withClusterNode(endpoint, node, (c) => c.call('CLUSTER', 'FORGET', g.id));
    await expect.poll(named, { timeout: 30_000, interval: 250 }).toBeUndefined();
  }, 60_000);
});

async function nodeKeys(
  endpoint: { admin: { username: string; password: string } },
  node: ClusterNodeAddress,
  match: string,
): Promise<number> {
  const client = new Redis({ ...node, ...endpoint.admin, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    return (await client.keys(match)).length;
  } finally {
    client.disconnect();
  }
}
