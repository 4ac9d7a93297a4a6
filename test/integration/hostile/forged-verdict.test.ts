/**
 * A verdict written into the queue's Redis by hand, as a tenant whose login reaches it (or anyone with its password)
 * could: `held` noted for a consumer that has no grant secret and is not held. holdfast did not write it (its seal
 * fails), so the status stays red for that consumer and says a value it did not write was seen; and a state left by a
 * release before seals is learned again by the next sweep, not taken for held meanwhile.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queueRedis, type QueueRedis } from '../../../src/queue/bull-connection.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { HOLDFAST_MAIN } from '../../support/holdfast-cli.js';
import { engineFixtures, readable, type Consumer } from '../engine/engine-fixture.js';

const clients: QueueRedis[] = [];
afterAll(() => clients.forEach((c) => c.disconnect()));

function holdfast(args: string[]): { code: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', HOLDFAST_MAIN, ...args], { encoding: 'utf8' });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

/** A brief as holdfast's encoding spells it, of a consumer held and just checked. */
function heldBrief(rev: number, login: string, at: number): string {
  const rest = { since: at - 60_000, login, brakeCount: 0, reason: null, dueAt: null };
  return `held ${rev} ${JSON.stringify({ ...rest, lastCheck: { at, outcome: 'held', detail: null } })}`;
}

describe("a verdict forged in the queue's Redis", () => {
  const fixture = engineFixtures();

  it('changes nothing: the consumer without a secret stays red, and the forged value is said', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '1s', secretGrace: '1s' } });
    const metrics = new Metrics();
    await f.start(undefined, undefined, { metrics });
    await f.until('every consumer held', () => f.allHeld());
    const config = join(f.dir, 'holdfast.yaml');
    const ghost: Consumer = {
      ...f.consumers[0]!,
      id: 'ghost',
      key: 'cache/ghost',
      login: `t${f.tag}_ghost`,
      secretPath: join(f.dir, 'grants/ghost.secret'),
    };
    f.writeContributions([...f.consumers, ghost]);
    await f.until('the ghost waits for its secret', async () =>
      (await f.status()).consumers.some((c) => c.consumer === ghost.key && c.state === 'waitingForSecret'),
    );

    // the tenant's writes: the ghost held, just asked, at a revision far ahead
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    clients.push(redis);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    const forge = async () => {
      const now = Date.now();
      await redis.hset(keys.states, ghost.key, 'held 40');
      await redis.hset(keys.briefs, ghost.key, heldBrief(40, ghost.login, now));
      await redis.hset(
        keys.memos,
        ghost.key,
        JSON.stringify({ at: now, outcome: 'held', detail: null, rev: 40, deepAt: now }),
      );
      await redis.zadd(keys.checked('cache'), now, ghost.key);
    };
    await forge();

    const shown = holdfast(['status', '-c', config]);
    expect(shown.output).not.toContain('all consumers held');
    expect(shown.output).toContain("in the queue's Redis that holdfast did not write (cache/ghost)");
    expect(shown.code).toBe(1);
    const report = await f.status();
    expect(report.healthy).toBe(false);
    expect(report.providers[0]!.states['held']).toBe(2);
    expect(report.consumers.find((c) => c.consumer === ghost.key)?.state).not.toBe('held');

    // /healthz and the metrics the alerts read say the same
    const server = await f.httpServer(f.engines[0]!, metrics);
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
      const scraped = await (await fetch(`${server.url}/metrics`)).text();
      expect(scraped).toContain('holdfast_consumers{provider="cache",state="unverified"} 1');
      // the ghost is not counted held (the two real consumers are, unless a 1 s check could not ask under load)
      const held = Number(/holdfast_consumers\{provider="cache",state="held"\} (\d+)/.exec(scraped)?.[1] ?? 0);
      expect(held).toBeLessThanOrEqual(2);
      expect(scraped).toMatch(/holdfast_unsealed_notes_total\{kind="state"\} [1-9]/);
    } finally {
      await server.close();
    }
    expect(
      f.logs.filter((l) => l.msg.startsWith("a value in the queue's Redis that holdfast did not write (a state")),
    ).toHaveLength(1);

    // and stays so while the writes are repeated
    await new Promise((r) => setTimeout(r, 3000));
    await forge();
    const later = holdfast(['status', '-c', config]);
    expect(later.code).toBe(1);
    expect(later.output).toContain('that holdfast did not write');
    expect(await f.canLogin(ghost)).toBe(false);
  });

  it('takes what a release before seals noted as unknown until the start-up sweep notes it again, and applies nothing for it', async () => {
    const f = await fixture({ consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '1s' } });
    await f.startHeld();
    const config = join(f.dir, 'holdfast.yaml');
    const redis = queueRedis(f.config.queue.connection, { maxRetriesPerRequest: null });
    clients.push(redis);
    const keys = coordinationKeys(holdfastPrefix(f.config.queue.prefix));
    const records = async () => Promise.all(f.consumers.map((c) => f.engines[0]!.store.get(c.key)));
    const checked = async () =>
      (await f.engines[0]!.coordination.locks.checkMemos(f.consumers.map((c) => c.key))).size === f.consumers.length;
    await f.until('each consumer checked', checked);
    const before = (await records()).map((r) => readable(r)!);
    for (const engine of f.engines.splice(0)) await engine.stop();

    // what the previous release wrote: the same states, briefs and memos, without a seal
    const unseal = async (hash: string) => {
      for (const [key, raw] of Object.entries(await redis.hgetall(hash)))
        await redis.hset(hash, key, raw.replace(/ ~[\w-]{22}$/, ''));
    };
    for (const hash of [keys.states, keys.briefs, keys.memos]) await unseal(hash);
    const stale = holdfast(['status', '-c', config]);
    expect(stale.code).toBe(1);
    expect(stale.output).toContain('left by a release before seals');

    await f.start();
    await f.until('the sweep noted every consumer again', async () => (await f.status()).healthy);
    await f.until('each consumer checked again', checked);
    // green once each is checked again (a 1 s check that could not ask under load is red a moment: asked again at once)
    await f.until('holdfast status green', () => holdfast(['status', '-c', config]).code === 0);
    expect(f.logs.some((l) => l.msg.startsWith("a value in the queue's Redis that holdfast did not write"))).toBe(true);
    // only checked again: no record written, nothing applied
    const after = (await records()).map((r) => readable(r)!);
    expect(after.map((r) => [r.rev, r.appliedAt?.getTime()])).toEqual(
      before.map((r) => [r.rev, r.appliedAt?.getTime()]),
    );
  });
});
