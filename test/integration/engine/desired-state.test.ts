/**
 * The contributions file: changes picked up without a restart, bad input never deletes, removals done even if made
 * while down.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures } from './engine-fixture.js';

async function aclUser(login: string): Promise<unknown> {
  const admin = new Redis(sharedBackend('redis').url);
  try {
    return await admin.call('ACL', 'GETUSER', login);
  } finally {
    admin.disconnect();
  }
}

describe('desired state from the contributions file', () => {
  const fixture = engineFixtures();

  const create = async (consumers: number) => {
    const f = await fixture({ consumers, timing: { verifyEvery: '1s', checkTimeout: '500ms' } });
    return f;
  };

  it('applies consumers added and removes consumers dropped, without a restart', async () => {
    const f = await create(4);
    const [a, b, c, d] = f.consumers as [
      (typeof f.consumers)[0],
      (typeof f.consumers)[0],
      (typeof f.consumers)[0],
      (typeof f.consumers)[0],
    ];
    f.writeContributions([a, b]);
    await f.start();
    await f.until('two held', async () => (await f.status()).consumers.filter((x) => x.state === 'held').length === 2);
    expect(await f.canLogin(c)).toBe(false);

    f.writeContributions([a, c, d]);
    await f.until(
      'c and d held, b gone',
      async () => {
        const status = await f.status();
        return status.consumers.length === 3 && status.healthy && (await aclUser(b.login)) === null;
      },
      10_000,
    );
    for (const x of [a, c, d]) expect(await f.canLogin(x)).toBe(true);
    expect(await f.canLogin(b)).toBe(false);
    expect(f.logsFor(b).map((l) => l.msg)).toContain(
      `removing → removed: login ${b.login} is gone from cache; record deleted`,
    );
  });

  it('keeps the last good desired state when the file is broken, says so, and recovers when it is fixed', async () => {
    const f = await create(3);
    await f.startHeld();
    const path = join(f.dir, 'contributions/cache.yaml');
    writeFileSync(path, 'consumers:\n  - id: c0000\n    login: "not a login!"\n    secret: x\n');
    await f.until(
      'status names the broken file',
      async () => (await f.status()).providers[0]?.contributionsError !== null,
      5000,
    );
    const status = await f.status();
    expect(status.healthy).toBe(false);
    expect(status.providers[0]!.contributionsError).toContain(`${path}:3: consumers[0].login: `);
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    expect((await f.status()).consumers.map((c) => c.state)).toEqual(['held', 'held', 'held']);
    expect(f.logs.filter((l) => l.msg.startsWith('contributions refused'))).toHaveLength(1);

    writeFileSync(path, ''); // truncated: also refused, nothing removed
    await new Promise((r) => setTimeout(r, 1000));
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);

    f.writeContributions(f.consumers);
    await f.until('healthy again', async () => (await f.status()).healthy, 5000);
    expect(f.logs.some((l) => l.msg === 'contributions valid again')).toBe(true);
  });

  it('rejects a consumer that asks beyond its provider policy, and applies the others', async () => {
    const f = await create(2);
    const [ok, greedy] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0]];
    writeFileSync(
      join(f.dir, 'contributions/cache.yaml'),
      [
        'consumers:',
        `  - { id: ${ok.id}, login: ${ok.login}, secret: ../grants/${ok.id}.secret, values: { keys: ["${ok.id}:*"] } }`,
        `  - { id: ${greedy.id}, login: ${greedy.login}, secret: ../grants/${greedy.id}.secret, values: { keys: ["*"] } }`,
      ].join('\n'),
    );
    await f.start();
    await f.until('one held, one rejected', async () => {
      const states = (await f.status()).consumers.map((c) => c.state).sort();
      return states.join() === 'held,rejected';
    });
    const rejected = (await f.status()).consumers.find((c) => c.consumer === greedy.key)!;
    expect(rejected.reason).toContain('values.keys[0]: "*" is outside the key prefix');
    expect(await aclUser(greedy.login)).toBeNull();
    expect(await f.canLogin(ok)).toBe(true);
  });

  it('removes, when it comes back, a consumer dropped from the file while holdfast was down', async () => {
    const f = await create(3);
    const [a, b, c] = f.consumers as [(typeof f.consumers)[0], (typeof f.consumers)[0], (typeof f.consumers)[0]];
    const engine = await f.startHeld();
    await engine.stop();
    f.engines.splice(f.engines.indexOf(engine), 1);

    f.writeContributions([a, c]);
    expect(await f.canLogin(b)).toBe(true);
    await f.start();
    await f.until(
      'b removed',
      async () => (await aclUser(b.login)) === null && (await f.status()).consumers.length === 2,
      10_000,
    );
    expect(await f.canLogin(a)).toBe(true);
    expect(await f.canLogin(c)).toBe(true);
  });
});
