/**
 * One entry asking for a list longer than its bound is refused alone, naming file, line, field
 * and the limit, and nothing of it reaches the server: on a running engine against real servers.
 *
 * - Redis checks ACL patterns in time that grows with the square of their number: a consumer with
 *   25,000 key patterns (all inside its own prefix) would block the server for seconds at each
 *   apply. Refused; another tenant's `GET` on the same Redis, sampled from a process of its own
 *   all along, stays under 200 ms.
 * - PostgreSQL: 100,000 repeats of an allowed database would be 100,000 GRANTs in one
 *   transaction. Refused in one problem; the other consumer stays held.
 */
import { spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer, type EngineFixture } from '../engine/engine-fixture.js';

const SAMPLER = join(import.meta.dirname, '../../support/get-sampler.ts');

/** Writes the contributions file whole, then renames it into place, as a deployment tool would. */
function declare(f: EngineFixture, items: string[]): string {
  const file = join(f.dir, 'contributions/cache.yaml');
  writeFileSync(`${file}.new`, `consumers:\n${items.join('\n')}\n`);
  renameSync(`${file}.new`, file);
  return file;
}

const item = (c: Consumer, values: string) =>
  `  - id: ${c.id}\n    login: ${c.login}\n    secret: ../grants/${c.id}.secret\n    values: ${values}`;

/** A tenant's GETs, timed in a child process until `stop()`. */
function sampleGets(host: string, port: number, c: Consumer, key: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', SAMPLER, host, String(port), c.login, c.password, key], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const ready = new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('ready') && resolve()));
  const stop = async (): Promise<{ samples: number; maxMs: number; slow: number[] }> => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.write('stop\n');
    await exited;
    return JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as {
      samples: number;
      maxMs: number;
      slow: number[];
    };
  };
  return { ready, stop };
}

describe('an entry over its bounds', () => {
  const fixture = engineFixtures();

  it('redis-acl: 25,000 key patterns refused alone, naming file, line, field and limit; another tenant reads in under 200 ms throughout', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 2, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    const [greedy, other] = f.consumers as [Consumer, Consumer];
    await f.startHeld();
    const tenant = new Redis({
      host: provider.host,
      port: provider.port,
      username: other.login,
      password: other.password,
    });
    await tenant.set(`${other.id}:x`, 'mine');
    tenant.disconnect();
    const sampler = sampleGets(provider.host, provider.port, other, `${other.id}:x`);
    await sampler.ready;

    const patterns = Array.from({ length: 25_000 }, (_, i) => `${greedy.id}:${i}:*`);
    const commands = JSON.stringify(['+@read', '+@write', '+@connection']);
    const file = declare(f, [
      item(greedy, `{ keys: ${JSON.stringify(patterns)}, commands: ${commands} }`),
      item(other, `{ keys: ["${other.id}:*"], commands: ${commands} }`),
    ]);
    const shown = async () => (await f.status()).consumers.find((c) => c.consumer === greedy.key)!;
    await f.until('the refusal shown', async () => (await shown()).refused !== null, 60_000);
    expect((await shown()).refused).toBe(
      `new spec refused by policy, the last accepted one kept: ${file}:5: consumers[0].values.keys: 25,000 key patterns, more than the 256 allowed (at most 256 key patterns, 16 KiB (16,384 bytes) in all)`,
    );
    // a few more rounds of checks and syncs, still sampled
    const refusedAt = Date.now();
    await f.until(
      'checked twice since',
      async () => Date.parse((await shown()).lastCheck?.at ?? '0') > refusedAt + 2_000,
      20_000,
    );
    const sampled = await sampler.stop();

    expect(sampled.samples).toBeGreaterThan(20);
    expect(sampled.slow).toEqual([]);
    expect(sampled.maxMs).toBeLessThan(200);
    // the accepted spec stays applied, the other consumer held
    const admin = new Redis({
      host: provider.host,
      port: provider.port,
      username: provider.admin.username,
      password: provider.admin.password,
    });
    try {
      const user = (await admin.call('ACL', 'GETUSER', greedy.login)) as unknown[];
      expect(String(user[user.indexOf('keys') + 1])).toBe(`~${greedy.id}:*`);
    } finally {
      admin.disconnect();
    }
    expect((await f.status()).consumers.find((c) => c.consumer === other.key)!.state).toBe('held');
    expect(await f.canLogin(other)).toBe(true);
  }, 180_000);

  it('postgres-roles: 100,000 repeats of an allowed database refused alone, in one problem', async () => {
    const f = await fixture({
      adapterKind: 'postgres-roles',
      consumers: 2,
      timing: { verifyEvery: '2s', checkTimeout: '2s' },
    });
    const [greedy, other] = f.consumers as [Consumer, Consumer];
    await f.startHeld();

    const repeated = Array.from({ length: 100_000 }, () => 'postgres').join(', ');
    const file = declare(f, [item(greedy, `{ databases: [${repeated}] }`), item(other, '{ databases: [postgres] }')]);
    const shown = async (c: Consumer) => (await f.status()).consumers.find((s) => s.consumer === c.key)!;
    await f.until('the refusal shown', async () => (await shown(greedy)).refused !== null, 60_000);
    expect((await shown(greedy)).refused).toBe(
      `new spec refused by policy, the last accepted one kept: ${file}:5: consumers[0].values.databases: 100,000 databases, more than the 64 allowed (at most 64 databases, 4 KiB (4,096 bytes) in all)`,
    );
    expect((await shown(greedy)).state).toBe('held');
    expect((await shown(other)).state).toBe('held');
    expect(await f.canLogin(greedy)).toBe(true);
    expect(await f.canLogin(other)).toBe(true);
    expect(f.logs.filter((l) => l.consumer === greedy.key && /apply failed|did not finish/.test(l.msg))).toEqual([]);
  }, 180_000);
});
