/**
 * A heal that restores what the record says was applied writes no record (the record is written
 * when what is applied changes, and such a heal changes nothing applied): it is an event (log,
 * timeline, metrics, check memo), so it sends nothing to the record store, works while the store
 * is frozen, and a worker killed in the middle of one leaves nothing lost. A rotation in the same
 * period is still written before it is applied.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { connectStore } from '../../../src/engine/engine.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { isUnreadable } from '../../../src/store/consumer-record.js';
import { EFFECT_STATES } from '../../../machines/consumer-machine.js';
import { LEASE_MS } from '../../../workers/due-rounds.js';
import { ownBackend, sharedBackend, type BackendEndpoint } from '../../backends/index.js';
import { spawnHoldfast, type HoldfastProcess } from '../../support/holdfast-cli.js';
import { mongoOpCounter } from '../../support/mongo-op-counter.js';
import { engineFixtures, type Consumer, type EngineFixture } from './engine-fixture.js';
import { RecordingAdapter } from './test-adapters.js';

/** Commands that read or write documents (not the driver's handshakes and pings). */
const DATA_COMMANDS = new Set([
  'find',
  'getMore',
  'aggregate',
  'count',
  'distinct',
  'insert',
  'update',
  'delete',
  'findAndModify',
  'bulkWrite',
]);
const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'bulkWrite']);

/** How many of `consumers` authenticate now, asked with pipelined `AUTH`s on one connection. */
async function authenticating(server: BackendEndpoint, consumers: readonly Consumer[]): Promise<number> {
  const redis = new Redis({
    host: server.host,
    port: server.port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const pipeline = redis.pipeline();
    for (const c of consumers) pipeline.call('AUTH', c.login, c.password);
    const results = (await pipeline.exec()) ?? [];
    return results.filter(([error]) => error === null).length;
  } catch {
    return 0;
  } finally {
    redis.disconnect();
  }
}

/** Drops the consumers' ACL users by hand, as a restore or a person would. */
async function dropUsers(server: BackendEndpoint, consumers: readonly Consumer[]): Promise<void> {
  const admin = new Redis(server.url);
  try {
    const pipeline = admin.pipeline();
    for (const c of consumers) pipeline.acl('DELUSER', c.login);
    await pipeline.exec();
  } finally {
    admin.disconnect();
  }
}

/** How many of the consumers' ACL users the server has now. */
async function usersThere(server: BackendEndpoint, tag: string): Promise<number> {
  const admin = new Redis(server.url);
  try {
    return (await admin.acl('USERS')).filter((u) => u.startsWith(`t${tag}_`)).length;
  } finally {
    admin.disconnect();
  }
}

async function metricValue(metrics: Metrics, name: string, labels: string): Promise<number> {
  const line = (await metrics.text()).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('a heal of what the record says was applied', () => {
  const fixture = engineFixtures();

  it('sends no operation to the record store, while a rotation in the same period is written before it is applied', async () => {
    const counter = await mongoOpCounter(sharedBackend('mongodb'));
    try {
      const provider = sharedBackend('redis');
      const f = await fixture({
        store: counter.endpoint,
        consumers: 40,
        timing: { verifyEvery: '2s', checkTimeout: '1s' },
        sentinelEvery: '1h',
      });
      const recorder = new RecordingAdapter(
        redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)),
      );
      const metrics = new Metrics();
      const engine = await f.start(undefined, recorder, { metrics });
      await f.until('every consumer held and checked since its apply', () => f.settled(), 60_000);
      const ops = (since: number) => counter.commands.filter((c) => c.at >= since && DATA_COMMANDS.has(c.command));

      // the consumers' logins dropped by hand: each healed at its next check, nothing sent to the store
      const dropped = Date.now();
      await dropUsers(provider, f.consumers);
      const healMs = await f.until(
        'every login authenticating again',
        async () => (await authenticating(provider, f.consumers)) === f.consumers.length,
        3 * 2100,
      );
      await new Promise((r) => setTimeout(r, 500)); // the last heals' jobs end
      const sent = ops(dropped);
      console.log(
        `[quiet heal] ${f.consumers.length} logins dropped, all authenticating again after ${healMs} ms; store data commands meanwhile: ${sent.length}`,
      );
      expect(sent).toEqual([]);
      for (const c of f.consumers) {
        const said = f
          .logsFor(c)
          .filter((l) => (l.time as number) >= dropped)
          .map((l) => l.msg);
        expect(said).toContain('not held (missing: the backend has no such ACL user); applying again now');
        expect(
          said.some((m) =>
            m.startsWith('held → lost → held: missing: the backend has no such ACL user; applied again in '),
          ),
        ).toBe(true);
      }
      // the timeline, the metrics and the check memos say so
      const events = await engine.coordination.notes.timeline('cache', dropped);
      for (const c of f.consumers)
        expect(
          events.filter((e) => e.key === c.key).map((e) => e.kind),
          c.key,
        ).toEqual(['lost', 'healed']);
      expect(await metricValue(metrics, 'holdfast_heal_seconds_count', 'provider="cache"')).toBe(f.consumers.length);
      expect(await metricValue(metrics, 'holdfast_applies_total', 'kind="reapply",outcome="applied"')).toBe(
        f.consumers.length,
      );
      const memos = await engine.coordination.locks.checkMemos(f.consumers.map((c) => c.key));
      for (const c of f.consumers) {
        // the last check's outcome: the heal, unless a routine check since found it held
        const memo = memos.get(c.key)!;
        const healed = events.find((e) => e.key === c.key && e.kind === 'healed')!;
        expect(memo.outcome, c.key).toBe('held');
        if (memo.at <= healed.at)
          expect(memo.detail, c.key).toBe('healed: missing: the backend has no such ACL user; applied again');
      }
      expect([...memos.values()].some((m) => m.detail?.startsWith('healed: '))).toBe(true);
      expect((await f.status()).healthy).toBe(true);

      // again, with one grant secret rotated meanwhile: that one is written before it is applied
      const rotated = f.consumers[0]!;
      rotated.password = randomBytes(18).toString('base64url');
      const again = Date.now();
      writeFileSync(rotated.secretPath, `${rotated.password}\n`, { mode: 0o600 });
      await dropUsers(provider, f.consumers);
      await f.until(
        'every login authenticating again, the rotated one with its new secret',
        async () => (await authenticating(provider, f.consumers)) === f.consumers.length,
        3 * 2100,
      );
      await new Promise((r) => setTimeout(r, 500));
      const sentAgain = ops(again);
      const writes = sentAgain.filter((c) => WRITES.has(c.command));
      const applied = recorder.calls.filter(
        (c) => c.method === 'create' && c.login === rotated.login && c.start >= again,
      );
      console.log(
        `[quiet heal] rotation beside ${f.consumers.length - 1} heals: store data commands ${sentAgain.map((c) => c.command).join(', ')}`,
      );
      expect(applied.length).toBeGreaterThanOrEqual(1);
      expect(writes.length).toBeGreaterThanOrEqual(2); // the intent, then held
      expect(writes[0]!.at).toBeLessThanOrEqual(applied[0]!.start);
      // the rotation's own: one read, its intent and its outcome; none for the heals
      expect(sentAgain.length).toBeLessThanOrEqual(3);
      const record = await engine.store.get(rotated.key);
      expect(record && !isUnreadable(record) && record.history.at(-1)).toMatchObject({ from: 'applying', to: 'held' });
    } finally {
      await counter.close();
    }
  }, 180_000);

  it('heals a cache restarted empty while the record store is frozen: every login authenticates within verifyEvery + 10 s', async () => {
    const store = await ownBackend('mongodb');
    const provider = await ownBackend('redis');
    const f = await fixture({ store, provider, consumers: 30, timing: { verifyEvery: '2s', checkTimeout: '1s' } });
    const engine = await f.startHeld();
    await f.until('every consumer checked since its apply', () => f.settled(), 30_000);
    const revs = new Map((await engine.store.list()).map((r) => [r._id, r.rev]));

    await store.pause();
    try {
      await f.until('the store outage noticed', () => engine.storeWatch.down !== null, 10_000);
      // a check may find the cache empty before restart() returns (it waits for the server to answer): heals from then
      // on count
      const restarting = Date.now();
      await provider.restart();
      const restarted = Date.now();
      const healMs = await f.until(
        'every login authenticating again',
        async () => (await authenticating(provider, f.consumers)) === f.consumers.length,
        2000 + 10_000,
      );
      console.log(
        `[quiet heal] store frozen: ${f.consumers.length} consumers authenticating again ${healMs} ms after the cache restarted empty (verifyEvery 2 s)`,
      );
      expect(engine.storeWatch.down).not.toBeNull(); // still frozen all along
      expect(Date.now() - restarted).toBeLessThan(12_000);
      // each was found not held and healed, not left alone: said once its heal is confirmed (a login authenticates from
      // the apply, a moment before)
      const healSaid = (c: Consumer) =>
        f.logsFor(c).some((l) => (l.time as number) >= restarting && l.msg.startsWith('held → lost → held: missing: '));
      await f.until('each heal said', () => f.consumers.every(healSaid), 10_000);
    } finally {
      await store.resume();
    }
    await f.until('the store answering again', () => engine.storeWatch.down === null, 20_000);
    await f.until('every consumer held', () => f.allHeld(), 20_000);
    // what each heal restored is what was recorded: no record was written for it
    const after = (await engine.store.list()).filter((r) => revs.get(r._id) !== r.rev).map((r) => r._id);
    console.log(
      `[quiet heal] records written for the heals (could-not-ask while the cache restarted, recorded after the store came back): ${after.length}`,
    );
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
  }, 120_000);

  it('leaves nothing lost when its worker is killed (SIGKILL) in the middle of a heal of 500 consumers', async () => {
    const verifyEveryMs = 30_000;
    const provider = sharedBackend('redis');
    const f = await fixture({ consumers: 500, timing: { verifyEvery: '30s', checkTimeout: '2s' } });
    const config = join(f.dir, 'holdfast.yaml');
    const { client, store } = await connectStore(f.config);
    const runs: HoldfastProcess[] = [];
    try {
      runs.push(spawnHoldfast(['run', '-c', config]));
      await until(
        f,
        'every consumer held',
        async () => (await store.list()).filter((r) => !isUnreadable(r) && r.machine.state === 'held').length === 500,
        180_000,
      );
      const revs = new Map((await store.list()).map((r) => [r._id, r.rev]));

      await dropUsers(provider, f.consumers);
      // killed as the first heals land, before all do: the others are under way (a loss wave asks all 500 at once,
      // healed within a second or so: looked at every 10 ms on one connection)
      const watcher = new Redis(provider.url);
      try {
        const started = Date.now();
        while ((await watcher.acl('USERS')).filter((u) => u.startsWith(`t${f.tag}_`)).length === 0) {
          if (Date.now() - started > 2 * verifyEveryMs) throw new Error('timed out waiting for the first heal');
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        watcher.disconnect();
      }
      runs[0]!.kill('SIGKILL');
      const healedAtKill = await usersThere(provider, f.tag);
      runs.push(spawnHoldfast(['run', '-c', config]));
      const healMs = await until(
        f,
        'every login authenticating again',
        async () => (await authenticating(provider, f.consumers)) === 500,
        verifyEveryMs + 10_000,
      );
      console.log(
        `[quiet heal] worker killed with ${healedAtKill} of 500 healed; all 500 authenticating ${healMs} ms after the kill (verifyEvery 30 s, a round's lease ${LEASE_MS / 1000} s)`,
      );
      expect(healedAtKill).toBeLessThan(500);

      const records = (await store.list()).map((r) => {
        if (isUnreadable(r)) throw new Error(`${r._id} unreadable`);
        return r;
      });
      expect(
        records.filter((r) => EFFECT_STATES.has(r.machine.state)).map((r) => `${r._id}: ${r.machine.state}`),
      ).toEqual([]);
      expect(records.filter((r) => r.machine.state !== 'held')).toEqual([]);
      const written = records.filter((r) => revs.get(r._id) !== r.rev);
      const why = written.map((r) =>
        r.history
          .slice(-2)
          .map((h) => `${h.from}→${h.to} (${h.reason ?? ''})`)
          .join(', '),
      );
      console.log(
        `[quiet heal] records written after all were held (the kill, what it interrupted): ${written.length} of 500${why.length ? `: ${[...new Set(why)].join('; ')}` : ''}`,
      );
    } finally {
      for (const run of runs) run.kill('SIGKILL');
      await client.close();
    }
  }, 420_000);
});

/**
 * Polls `predicate` every 500 ms until it holds (the time it took), or fails after `timeoutMs`: the fixture's own polls
 * read through an engine in this process, and there is none.
 */
async function until(
  f: EngineFixture,
  what: string,
  predicate: () => Promise<boolean>,
  timeoutMs: number,
): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await predicate().catch(() => false)) return Date.now() - start;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${f.consumers.length} consumers)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
