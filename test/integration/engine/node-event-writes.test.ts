/**
 * A node event asks every consumer the node serves, and writes only the logins the node lost (issue 42): each one once
 * for the event, counted by the server itself, and none of a consumer that was held. PostgreSQL re-initialised (its
 * statement log), SeaweedFS recreated empty (the adapter's `CreateAccessKey` requests), a Sentinel failover (each
 * node's `ACL SETUSER` calls). At `verifyEvery: 60s`, so every heal comes from the event, not from an interval.
 * The bench at 1,000 consumers: test/bench/restart-backends.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/engine/engine.js';
import { ownBackend, ownRedisReplicas } from '../../backends/index.js';
import { redisLogin } from '../../backends/logins.js';
import {
  nodeAddress,
  SENTINEL_MASTER,
  type LocalRedisReplicas,
  type NodeAddress,
} from '../../backends/redis-replicas.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';

/**
 * Waits until every consumer authenticates on the provider (or `on`), then until the status is healthy again (unless
 * `healthy` is false: a node still down keeps it red).
 */
async function allBack(
  f: EngineFixture,
  on: (c: Consumer) => Promise<boolean> = (c) => f.canLogin(c),
  healthy = true,
): Promise<void> {
  await f.until(
    'every consumer authenticates again',
    async () => (await Promise.all(f.consumers.map((c) => on(c).catch(() => false)))).every(Boolean),
    60_000,
  );
  if (healthy)
    await f.until('status healthy once every suspect is asked', async () => (await f.status()).healthy, 30_000);
}

/** The heals the engine logged for each consumer since `since` (` → lost → `, with the reason). */
function healsSince(f: EngineFixture, since: number): number[] {
  return f.consumers.map(
    (c) => f.logsFor(c).filter((l) => (l.time as number) >= since && / → lost → /.test(l.msg)).length,
  );
}

describe('PostgreSQL re-initialised', () => {
  const fixture = engineFixtures();

  it('writes each role once, by the server’s own statement log', async () => {
    const provider = await ownBackend('postgres', { postgresSettings: { log_statement: 'ddl' } });
    const f = await fixture({
      provider,
      adapterKind: 'postgres-roles',
      consumers: 60,
      timing: { verifyEvery: '60s', checkTimeout: '10s' },
    });
    await f.startHeld();
    const logFrom = provider.serverLog!().length;
    const restarted = Date.now();
    await provider.restart({ keepData: false });
    await allBack(f);
    // each statement the server ran (an entry may hold several: new roles are made in one query), never an error's echo
    const written = new Map<string, number>();
    const entries = provider.serverLog!()
      .slice(logFrom)
      .split(/\n(?=\d{4}-\d\d-\d\d \d\d:)/)
      .filter((entry) => / LOG: {2}statement: /.test(entry));
    for (const entry of entries)
      for (const m of entry.matchAll(/(?:CREATE|ALTER) ROLE "([^"]+)"/g))
        written.set(m[1]!, (written.get(m[1]!) ?? 0) + 1);
    expect(f.consumers.map((c) => written.get(c.login) ?? 0)).toEqual(f.consumers.map(() => 1));
    expect(healsSince(f, restarted)).toEqual(f.consumers.map(() => 1));
  }, 180_000);
});

describe('SeaweedFS recreated empty', () => {
  const fixture = engineFixtures();

  it('is seen answering again: every identity made again at once, each access key created once', async () => {
    const provider = await ownBackend('s3');
    const f = await fixture({
      provider,
      adapterKind: 's3-identities',
      consumers: 30,
      timing: { verifyEvery: '60s', checkTimeout: '10s' },
    });
    const engine = await f.startHeld();
    const keysBefore = createAccessKeys(engine);
    await provider.restart({ keepData: false });
    expect(await f.canLogin(f.consumers[0]!)).toBe(false);
    await allBack(f);
    // every identity signing again, and as many keys created as identities: each once
    expect(createAccessKeys(engine) - keysBefore).toBe(f.consumers.length);
  }, 180_000);
});

/** `CreateAccessKey` requests the engine's s3-identities adapter sent. */
function createAccessKeys(engine: Engine): number {
  const adapter = engine.providers.get('cache')?.adapter as { createAccessKeyCalls?: number } | undefined;
  return adapter?.createAccessKeyCalls ?? NaN;
}

/** `ACL SETUSER` calls on `node` since its stats were reset or it started. */
function setUsers(set: LocalRedisReplicas, node: NodeAddress): Promise<number> {
  return set.withNode(node, async (c) =>
    Number(/cmdstat_acl\|setuser:calls=(\d+)/.exec(await c.info('commandstats'))?.[1] ?? 0),
  );
}

describe('a Sentinel failover', () => {
  const fixture = engineFixtures();

  it('writes nothing on the promoted replica, which held every consumer; the old master, back empty, once each', async () => {
    const set = await ownRedisReplicas({ replicas: 2, sentinels: 3, downAfterMs: 1_000 });
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      adminLines: [`sentinels: [${set.sentinelUrls.join(', ')}]`, `master: ${SENTINEL_MASTER}`],
      consumers: 60,
      timing: { verifyEvery: '60s', checkTimeout: '3s' },
    });
    await f.startHeld();
    // held means on every node: a replica the engine found after its first applies has its logins before the count starts
    await f.until(
      'every login authenticates on every node',
      async () =>
        (
          await Promise.all(
            set.nodes.flatMap((n) => f.consumers.map((c) => redisLogin(n, c.login, c.password).catch(() => false))),
          )
        ).every(Boolean),
      30_000,
    );
    for (const node of set.nodes) await set.withNode(node, (c) => c.config('RESETSTAT'));
    const old = await set.currentMaster();
    const killed = Date.now();
    set.kill(old);
    const promoted = await set.waitForNewMaster(old);
    // the old master down keeps the status red: only the logins on the new one are waited for
    await allBack(f, (c) => redisLogin(promoted, c.login, c.password), false);
    await set.restartEmpty(old);
    await allBack(f, (c) => redisLogin(old, c.login, c.password));
    const others = set.nodes.filter((n) => nodeAddress(n) !== nodeAddress(old));
    expect(await Promise.all(others.map((n) => setUsers(set, n)))).toEqual(others.map(() => 0));
    // its stats began empty with it: every login on it authenticates, as many calls as logins: each once
    expect(await setUsers(set, old)).toBe(f.consumers.length);
    expect(healsSince(f, killed).every((n) => n <= 1)).toBe(true);
  }, 180_000);
});
