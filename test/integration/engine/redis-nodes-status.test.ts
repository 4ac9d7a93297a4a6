/**
 * `holdfast status` (another process than the engine's) is red naming a replica that cannot be
 * asked, and green again once it answers: the worker notes its provider's nodes in the queue's
 * Redis, and the status reads them there.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownRedisReplicas, type BackendEndpoint } from '../../backends/index.js';
import { nodeAddress, type LocalRedisReplicas, type NodeAddress } from '../../backends/redis-replicas.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';

const MAIN = join(import.meta.dirname, '../../../src/cli/main.ts');

function endpointOf(set: LocalRedisReplicas, node: NodeAddress): BackendEndpoint {
  const { username, password } = set.admin;
  return { kind: 'redis', origin: 'local', flavor: set.flavor, host: node.host, port: node.port, admin: set.admin, url: `redis://${username}:${password}@${nodeAddress(node)}` };
}

/** `holdfast status` as a person runs it, in its own process. */
function holdfastStatus(f: EngineFixture, ...more: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'status', '-c', join(f.dir, 'holdfast.yaml'), ...more], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('the status of a backend of several nodes', () => {
  const fixture = engineFixtures();

  it('is red naming a replica that cannot be asked, in `holdfast status` and its --json, and green once it answers', async () => {
    const set = await ownRedisReplicas({ replicas: 2 });
    const f = await fixture({ provider: endpointOf(set, set.nodes[0]!), consumers: 4, timing: { verifyEvery: '3s', checkTimeout: '3s' } });
    await f.startHeld();
    const frozen = set.nodes[1]!;
    const address = nodeAddress(frozen);
    await f.until('every node noted answering', async () => (await f.status()).providers[0]!.nodes.filter((n) => n.answers).length === 3, 20_000);
    const green = await holdfastStatus(f);
    expect(green.code, green.output).toBe(0);

    set.pause(frozen);
    try {
      await f.until('the frozen replica named', async () => (await f.status()).providers[0]!.problems.some((p) => p.startsWith(`node ${address} (replica) cannot be asked since`)), 30_000);
      const red = await holdfastStatus(f);
      expect(red.code, red.output).toBe(1);
      expect(red.output).toContain(`node ${address} (replica) cannot be asked since`);
      const json = await holdfastStatus(f, '--json');
      const provider = (JSON.parse(json.output.slice(json.output.indexOf('{'))) as { providers: Array<{ nodes: Array<{ address: string; role: string; answers: boolean }> }> }).providers[0]!;
      expect(provider.nodes).toHaveLength(3);
      expect(provider.nodes.find((n) => n.address === address)).toEqual({ address, role: 'replica', answers: false });
      expect(provider.nodes.filter((n) => n.answers)).toHaveLength(2);
    } finally {
      set.resume(frozen);
    }

    await f.until('the replica answers again', async () => (await f.status()).providers[0]!.nodes.every((n) => n.answers), 30_000);
    await f.until('every consumer held', () => f.allHeld(), 30_000);
    const again = await holdfastStatus(f);
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toContain(address);
  }, 120_000);
});
