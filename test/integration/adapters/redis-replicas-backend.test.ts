/**
 * The test harness's replicated Redis and Sentinels: they start, replicate, and fail over when the master is killed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownRedisReplicas } from '../../backends/index.js';
import { nodeAddress, type LocalRedisReplicas } from '../../backends/redis-replicas.js';

describe('the harness: a primary, two replicas and three Sentinels', () => {
  let set: LocalRedisReplicas;
  beforeAll(async () => {
    set = await ownRedisReplicas({ replicas: 2, sentinels: 3 });
  }, 60_000);
  afterAll(async () => set?.stop());

  it('replicates, and a killed master is replaced by a replica the Sentinels name', async () => {
    const old = await set.currentMaster();
    expect(nodeAddress(old)).toBe(nodeAddress(set.nodes[0]!));
    await set.withNode(old, (c) => c.set('k', 'v'));
    const replica = set.nodes[1]!;
    await expect.poll(() => set.withNode(replica, (c) => c.get('k')), { timeout: 10_000 }).toBe('v');
    set.kill(old);
    const promoted = await set.waitForNewMaster(old);
    expect(set.nodes.map(nodeAddress)).toContain(nodeAddress(promoted));
    await set.restartEmpty(old);
    await set.waitReplicating(promoted, 2);
  }, 90_000);
});
