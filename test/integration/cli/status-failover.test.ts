/**
 * `holdfast status` while one queue shard's master fails over (`queue.shards: 3` on a real
 * Redis Cluster): the shard it cannot read is named once, with the node that owns its slot; its
 * consumers are not taken for forgotten or never applied; the other shards' are reported from
 * what they answered; and once the replica serves, the status is green again.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { readStatus, statusCommand } from '../../../src/cli/status-command.js';
import { shardPrefixes } from '../../../src/config/shard-prefixes.js';
import { holdfastPrefix } from '../../../src/queue/coordination.js';
import { coordinationKeys } from '../../../src/queue/coordination/keys.js';
import { shardOf } from '../../../src/queue/shard-of.js';
import { redReasons, type StatusReport } from '../../../src/status/status-report.js';
import { formatStatus } from '../../../src/status/format-status.js';
import { ownRedisCluster } from '../../backends/index.js';
import { addressOf, slotOwner } from '../../backends/redis-cluster.js';
import { prefixOverMasters } from '../../support/cluster-prefix.js';
import { engineFixtures, type EngineFixture } from '../engine/engine-fixture.js';

const SHARDS = 3;

/** `holdfast status --json` in this process: its exit code and its report. */
async function statusJson(f: EngineFixture): Promise<{ code: number; report: StatusReport }> {
  let out = '';
  const write = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  try {
    const code = await statusCommand({ config: join(f.dir, 'holdfast.yaml'), json: true });
    return { code, report: JSON.parse(out) as StatusReport };
  } finally {
    write.mockRestore();
  }
}

describe('holdfast status during a failover of one queue shard', () => {
  const fixture = engineFixtures();

  it('names the shard it cannot read and its node, never its consumers as forgotten, and is green after the promotion', async () => {
    const cluster = await ownRedisCluster({ nodeTimeoutMs: 2000 });
    const prefix = await prefixOverMasters(cluster.endpoint, SHARDS);
    const f = await fixture({
      queueCluster: cluster.endpoint,
      prefix,
      shards: SHARDS,
      consumers: 30,
      timing: { verifyEvery: '2s', checkTimeout: '1s' },
      sentinelEvery: '2s',
    });
    await f.startHeld();
    await f.until('status healthy', async () => (await readStatus(f.config, {})).healthy, 30_000);
    const shard1 = shardPrefixes(prefix, SHARDS)[1]!;
    const victim = await slotOwner(cluster.endpoint, coordinationKeys(holdfastPrefix(shard1)).alive);
    const onShard1 = f.consumers.filter((c) => shardOf(c.key, SHARDS) === 1).map((c) => c.key);
    expect(onShard1.length).toBeGreaterThan(0);

    cluster.kill(victim);
    const killed = Date.now();
    const { code, report: during } = await statusJson(f);
    const answeredMs = Date.now() - killed;
    const text = formatStatus(during);
    console.log(
      `[status failover] right after the kill of ${addressOf(victim)} (answered in ${answeredMs} ms, exit ${code}):\n${text}`,
    );
    expect(code).toBe(1);
    expect(during.healthy).toBe(false);
    expect(text).not.toContain('has forgotten every job');
    expect(text).not.toContain('have no record yet');
    expect(text).not.toMatch(/\blost\b/);
    const named = redReasons(during).filter((line) => line.includes(shard1));
    expect(named).toHaveLength(1);
    expect(named[0]).toContain(`on node ${addressOf(victim)}`);
    expect(during.unreadableShards.filter((s) => s.shard === shard1).map((s) => s.node)).toEqual([addressOf(victim)]);
    for (const key of onShard1) expect(during.consumers.some((c) => c.consumer === key && !c.healthy)).toBe(false);
    expect(JSON.stringify(during)).not.toContain(cluster.endpoint.admin.password);

    // once the replica serves the shard, a later status no longer names it, and turns green
    await f.until(
      'the status no longer names the shard',
      async () => !formatStatus(await readStatus(f.config, {})).includes(shard1),
      60_000,
    );
    await f.until('status healthy again', async () => (await readStatus(f.config, {})).healthy, 60_000);
    const load = (await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(`[status failover] green again ${Date.now() - killed} ms after the kill; load ${load}`);
  }, 180_000);
});
