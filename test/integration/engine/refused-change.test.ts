/**
 * A held consumer whose file entry changes to something its provider's policy refuses keeps its last accepted spec,
 * applied and checked.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ownBackend } from '../../backends/index.js';
import { engineFixtures, readable, type Consumer } from './engine-fixture.js';

describe('a refused change of a held consumer', () => {
  const fixture = engineFixtures();

  it('keeps the accepted spec held and checked, says so red with file, line and field, and a backend restart restores it', async () => {
    const provider = await ownBackend('redis');
    const f = await fixture({ provider, consumers: 3, timing: { verifyEvery: '500ms', checkTimeout: '500ms' } });
    const [greedy] = f.consumers as [Consumer];
    const file = join(f.dir, 'contributions/cache.yaml');
    await f.startHeld();

    f.writeContributions(f.consumers, undefined, (c) =>
      c === greedy ? ['+@all'] : ['+@read', '+@write', '+@connection'],
    );
    const shown = async () => (await f.status()).consumers.find((c) => c.consumer === greedy.key)!;
    await f.until('the refusal shown', async () => (await shown()).refused !== null, 10_000);
    const refusedAt = Date.now();
    let status = await f.status();
    expect(status.healthy).toBe(false);
    const c = await shown();
    expect(c.state).toBe('held');
    expect(c.healthy).toBe(false);
    // the consumer's entry starts on line 2 (4 lines each); the command rule is on its fourth
    expect(c.refused).toContain(
      `${file}:2: values.commands[0]: "+@all" is not among the commands allowed by the provider's policy`,
    );
    expect(c.reason).toContain(`${file}:2: values.commands[0]`);

    // still checked, with its accepted rules
    await f.until(
      'checked after the refusal',
      async () => Date.parse((await shown()).lastCheck?.at ?? '0') > refusedAt + 600,
      10_000,
    );
    expect((await shown()).state).toBe('held');
    const admin = new Redis({
      host: provider.host,
      port: provider.port,
      username: provider.admin.username,
      password: provider.admin.password,
    });
    try {
      const user = (await admin.call('ACL', 'GETUSER', greedy.login)) as unknown[];
      const commands = String(user[user.indexOf('commands') + 1]);
      expect(commands).not.toContain('+@all');
      // its accepted reads (Redis spells the rules with the deny list after them in categories of its own)
      expect(await admin.call('ACL', 'DRYRUN', greedy.login, 'GET', `${greedy.id}:x`)).toBe('OK');
      expect(await admin.call('ACL', 'DRYRUN', greedy.login, 'FLUSHALL')).not.toBe('OK');
    } finally {
      admin.disconnect();
    }
    expect(await f.canLogin(greedy)).toBe(true);

    // the backend forgets everything: the accepted spec is restored
    await provider.restart();
    expect(await f.canLogin(greedy)).toBe(false);
    await f.until(
      'every consumer restored',
      async () => (await Promise.all(f.consumers.map((x) => f.canLogin(x)))).every(Boolean),
      15_000,
    );
    status = await f.status();
    expect(status.consumers.map((x) => x.state)).toEqual(['held', 'held', 'held']);
    expect((await shown()).refused).not.toBeNull();
    const record = readable(await f.engines[0]!.store.get(greedy.key))!;
    expect(record.history.some((h) => h.to === 'rejected')).toBe(false);
    expect(f.logsFor(greedy).filter((l) => l.msg.startsWith('new spec refused'))).toHaveLength(1);

    // fixed: the refusal is over, and the status is green
    f.writeContributions(f.consumers);
    await f.until('healthy again', async () => (await f.status()).healthy, 10_000);
  });
});
