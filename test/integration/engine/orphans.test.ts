/**
 * Orphans: logins the provider made under the managed prefix that no consumer claims are reported, and removed only
 * when the provider says so. A login under the prefix that the provider did not make (by hand) is neither.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../src/adapters/registry.js';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { sharedBackend } from '../../backends/index.js';
import { engineFixtures, type Consumer } from './engine-fixture.js';

describe('orphan logins', () => {
  const fixture = engineFixtures();

  it('two logins the provider made under the prefix are reported, not removed; removed once orphans.remove is set; one made by hand never', async () => {
    const f = await fixture({
      consumers: 3,
      timing: { verifyEvery: '500ms', checkTimeout: '500ms' },
      providerLines: ['orphans: { prefix: "t{tag}_", every: 300ms }'],
    });
    const [a, b, gone] = f.consumers as [Consumer, Consumer, Consumer];
    const admin = new Redis(sharedBackend('redis').url);
    const strays = [`t${f.tag}_stray1`, `t${f.tag}_stray2`];
    const outside = `x${f.tag}_other`;
    const byHand = `t${f.tag}_byhand`;
    // made by this provider (its mark), then forgotten by the contributions: what orphans are
    const provider = f.config.providers[0]!;
    const maker = redisAcl.connect(provider.admin, ownershipOf(provider));
    try {
      await f.startHeld();
      for (const login of [...strays, outside]) {
        await maker.create(
          {
            login,
            password: 'a-long-password',
            values: redisAcl.valuesSchema.parse({ keys: ['x'], commands: ['+get'] }),
          },
          { signal: AbortSignal.timeout(5_000) },
        );
      }
      await admin.call('ACL', 'SETUSER', byHand, 'on', '>a-long-password', '~x', '+get');
      // a consumer removed from the file is not an orphan while its removal runs
      f.writeContributions([a, b]);
      const problems = async () => (await f.status()).providers[0]!.problems;
      await f.until('both reported', async () => (await problems()).some((p) => p.includes(strays.join(', '))), 10_000);
      const shown = (await problems()).find((p) => p.includes('orphans'))!;
      expect(shown).toContain(`2 login(s) under "t${f.tag}_" that no consumer claims (orphans`);
      expect(shown).not.toContain(outside);
      expect(shown).not.toContain(byHand);
      expect((await f.status()).healthy).toBe(false);
      await new Promise((r) => setTimeout(r, 1000)); // several listings
      for (const login of strays) expect(await admin.call('ACL', 'GETUSER', login)).not.toBeNull();
      const said = f.logs.filter((l) => l.msg.includes('(orphans)'));
      expect(said.map((l) => l.msg)).toEqual([
        `2 login(s) on cache under "t${f.tag}_" that no consumer claims (orphans): ${strays.join(', ')}`,
      ]);
      expect(f.logs.some((l) => l.msg.includes('orphan') && l.msg.includes(gone.login))).toBe(false);

      // the provider says so: removed, and the status is green again
      for (const engine of f.engines.splice(0)) await engine.stop();
      const config = join(f.dir, 'holdfast.yaml');
      writeFileSync(config, readFileSync(config, 'utf8').replace('every: 300ms }', 'every: 300ms, remove: true }'));
      f.config = await loadConfig(config, { adapters: ADAPTERS, environment: { stdoutIsTTY: false } });
      await f.start();
      await f.until(
        'strays removed, status green',
        async () => {
          const left = await Promise.all(strays.map((login) => admin.call('ACL', 'GETUSER', login)));
          return left.every((u) => u === null) && (await f.status()).healthy;
        },
        10_000,
      );
      expect(await admin.call('ACL', 'GETUSER', outside)).not.toBeNull();
      expect(await admin.call('ACL', 'GETUSER', byHand)).not.toBeNull();
      for (const c of [a, b]) expect(await f.canLogin(c)).toBe(true);
    } finally {
      await admin.call('ACL', 'DELUSER', ...strays, outside, byHand);
      admin.disconnect();
      await maker.close();
    }
  });
});
