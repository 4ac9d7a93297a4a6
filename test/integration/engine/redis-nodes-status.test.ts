/**
 * `holdfast status` (another process than the engine's) is red naming a replica that cannot be
 * asked, and green again once it answers; red naming a replica that lacks consumers (where
 * holdfast's admin may not write ACL users), with how many, and green once they are applied
 * there: the worker notes its provider's nodes in the queue's Redis, and the status reads them
 * there. A replica's `masteruser` is never a consumer's.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisLogin } from '../../backends/logins.js';
import { ownRedisReplicas } from '../../backends/index.js';
import { nodeAddress, type NodeAddress } from '../../backends/redis-replicas.js';
import { engineFixtures, type EngineFixture } from './engine-fixture.js';

const MAIN = join(import.meta.dirname, '../../../src/cli/main.ts');

/** The consumers the status's --json says `address` lacks. */
function jsonNodes(output: string): Array<{ address: string; role: string; answers: boolean; missing: number }> {
  return (
    JSON.parse(output.slice(output.indexOf('{'))) as {
      providers: Array<{ nodes: Array<{ address: string; role: string; answers: boolean; missing: number }> }>;
    }
  ).providers[0]!.nodes;
}

/** `holdfast status` as a person runs it, in its own process. */
function holdfastStatus(f: EngineFixture, ...more: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'status', '-c', join(f.dir, 'holdfast.yaml'), ...more],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('the status of a backend of several nodes', () => {
  const fixture = engineFixtures();

  it('is red naming a replica that cannot be asked, in `holdfast status` and its --json, and green once it answers', async () => {
    const set = await ownRedisReplicas({ replicas: 2 });
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      consumers: 4,
      timing: { verifyEvery: '3s', checkTimeout: '3s' },
    });
    await f.startHeld();
    const frozen = set.nodes[1]!;
    const address = nodeAddress(frozen);
    await f.until(
      'every node noted answering',
      async () => (await f.status()).providers[0]!.nodes.filter((n) => n.answers).length === 3,
      20_000,
    );
    const green = await holdfastStatus(f);
    expect(green.code, green.output).toBe(0);

    set.pause(frozen);
    try {
      await f.until(
        'the frozen replica named',
        async () =>
          (await f.status()).providers[0]!.problems.some((p) =>
            p.startsWith(`node ${address} (replica) cannot be asked since`),
          ),
        30_000,
      );
      const red = await holdfastStatus(f);
      expect(red.code, red.output).toBe(1);
      expect(red.output).toContain(`node ${address} (replica) cannot be asked since`);
      const json = await holdfastStatus(f, '--json');
      const provider = (
        JSON.parse(json.output.slice(json.output.indexOf('{'))) as {
          providers: Array<{ nodes: Array<{ address: string; role: string; answers: boolean }> }>;
        }
      ).providers[0]!;
      expect(provider.nodes).toHaveLength(3);
      expect(provider.nodes.find((n) => n.address === address)).toEqual({
        address,
        role: 'replica',
        answers: false,
        missing: 0,
      });
      expect(provider.nodes.filter((n) => n.answers)).toHaveLength(2);
    } finally {
      set.resume(frozen);
    }

    await f.until(
      'the replica answers again',
      async () => (await f.status()).providers[0]!.nodes.every((n) => n.answers),
      30_000,
    );
    await f.until('every consumer held', () => f.allHeld(), 30_000);
    const again = await holdfastStatus(f);
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toContain(address);
  }, 120_000);

  it('is red naming a replica where the admin may not write ACL users, with how many consumers it lacks, and green once it may; a replica restarted empty is healed at once', async () => {
    const set = await ownRedisReplicas({ replicas: 2 });
    const f = await fixture({
      provider: set.endpoint(set.nodes[0]!),
      consumers: 3,
      timing: { verifyEvery: '2s', checkTimeout: '2s' },
    });
    const [, other, readOnly] = set.nodes as [NodeAddress, NodeAddress, NodeAddress];
    const address = nodeAddress(readOnly);
    // holdfast's admin may read and authenticate there, not write ACL users (Redis does not replicate ACL rules
    // either);
    // the operator keeps a login of their own there to give the right back
    const ops = { username: 'ops', password: randomBytes(12).toString('hex') };
    await set.withNode(readOnly, async (c) => {
      await c.call('ACL', 'SETUSER', ops.username, 'on', `>${ops.password}`, '~*', '&*', '+@all');
      await c.call('ACL', 'SETUSER', 'default', '-acl|setuser');
    });
    await f.start();
    const lacking = `node ${address} (replica) lacks 3 consumers: applying there failed (`;
    await f.until(
      'the replica named lacking every consumer',
      async () => (await f.status()).providers[0]!.problems.some((p) => p.startsWith(lacking)),
      60_000,
    );
    const red = await holdfastStatus(f);
    expect(red.code, red.output).toBe(1);
    expect(red.output).toContain(lacking);
    console.log(`[node lacks consumers] ${red.output.split('\n').find((l) => l.includes('lacks')) ?? ''}`);
    expect(red.output).toMatch(/NOPERM[^\n]*acl\|setuser/);
    const json = await holdfastStatus(f, '--json');
    expect(
      jsonNodes(json.output)
        .map((n) => [n.address, n.missing])
        .sort(),
    ).toEqual(set.nodes.map((n) => [nodeAddress(n), n === readOnly ? 3 : 0]).sort());
    for (const c of f.consumers) {
      for (const node of set.nodes)
        expect(await redisLogin(node, c.login, c.password), `${c.login} on ${nodeAddress(node)}`).toBe(
          node !== readOnly,
        );
      expect(await redisLogin(readOnly, ops.username, ops.password)).toBe(true);
    }

    // the admin's rights restored there: every consumer applied there within an interval (generous bound), and green
    const operator = new Redis({ ...readOnly, ...ops, lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await operator.connect();
      await operator.call('ACL', 'SETUSER', 'default', '+acl|setuser');
    } finally {
      operator.disconnect();
    }
    const restored = Date.now();
    await f.until(
      'every consumer held on the replica',
      async () => (await Promise.all(f.consumers.map((c) => redisLogin(readOnly, c.login, c.password)))).every(Boolean),
      30_000,
    );
    const healedMs = Date.now() - restored;
    await f.until(
      'no node lacks consumers, and every consumer held',
      async () => (await f.status()).providers[0]!.nodes.every((n) => n.missing === 0) && (await f.allHeld()),
      30_000,
    );
    const green = await holdfastStatus(f);
    expect(green.code, green.output).toBe(0);
    expect(green.output).not.toContain(address);

    // a replica restarted empty lacks every consumer for moments only: applied there at once, the count back to 0
    await set.restartEmpty(other);
    const restarted = Date.now();
    await f.until(
      'every consumer held on the restarted replica',
      async () => (await Promise.all(f.consumers.map((c) => redisLogin(other, c.login, c.password)))).every(Boolean),
      30_000,
    );
    const rejoinedMs = Date.now() - restarted;
    await f.until(
      'the restarted replica lacks none',
      async () => (await f.status()).providers[0]!.nodes.find((n) => n.address === nodeAddress(other))?.missing === 0,
      30_000,
    );
    const after = await holdfastStatus(f);
    expect(after.code, after.output).toBe(0);
    console.log(
      `[node lacks consumers] applied on the replica ${healedMs} ms after the admin's rights were restored; on the replica restarted empty ${rejoinedMs} ms after its restart`,
    );
  }, 150_000);
});
