/**
 * The record store frozen (SIGSTOP) or stopped: nothing is applied or removed meanwhile (routine
 * checks go on: a heal of what the record says was applied needs no store, `quiet-heal.test.ts`),
 * it is said once, and everything resumes when it answers.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redisAcl } from '../../../src/adapters/redis-acl/index.js';
import { ownershipOf } from '../../../src/config/config.js';
import { ownBackend } from '../../backends/index.js';
import { exitOf, spawnHoldfast } from '../../support/holdfast-cli.js';
import { engineFixtures } from './engine-fixture.js';
import { RecordingAdapter } from './test-adapters.js';

describe('the record store down', () => {
  const fixture = engineFixtures();

  it('frozen, then stopped: only checks while it does not answer, and every consumer held again after', async () => {
    const store = await ownBackend('mongodb');
    const f = await fixture({ store, consumers: 10, timing: { verifyEvery: '300ms', checkTimeout: '300ms' } });
    const recorder = new RecordingAdapter(
      redisAcl.connect(f.config.providers[0]!.admin, ownershipOf(f.config.providers[0]!)),
    );
    await f.startHeld(undefined, recorder);
    const engine = f.engines[0]!;
    const saidDown = () =>
      f.logs.filter((l) => l.msg.startsWith('the record store at ') && l.msg.includes('does not answer')).length;
    const saidBack = () => f.logs.filter((l) => l.msg.includes('answers again after')).length;

    for (const [outage, restore, n] of [
      [() => store.pause(), () => store.resume(), 1],
      [() => store.down(), () => store.up(), 2],
    ] as const) {
      await f.until('checks running', () => recorder.count('holds') > 0);
      await outage();
      await f.until('the outage noticed', () => engine.storeWatch.down !== null, 10_000);
      // calls begun before it was noticed may still end; none may begin after
      await new Promise((r) => setTimeout(r, 500));
      const noticed = Date.now();
      await new Promise((r) => setTimeout(r, 3000)); // ten intervals
      // nothing changed on the backend: routine checks go on, nothing is applied or removed
      expect(recorder.calls.filter((c) => c.start >= noticed && c.method !== 'holds')).toEqual([]);
      expect(recorder.count('holds', noticed)).toBeGreaterThan(0);
      expect(saidDown()).toBe(n);
      // spawned, not spawnSync: this process's engine keeps noting the outage meanwhile (its note lasts 5 s)
      const child = spawnHoldfast(['status', '-c', join(f.dir, 'holdfast.yaml')]);
      const status = { status: await exitOf(child), stdout: child.output() };
      expect(status.status).toBe(1);
      expect(status.stdout).toContain(`record store ${f.config.store.url} does not answer since`);

      await restore();
      await f.until('answering again', () => engine.storeWatch.down === null, 20_000);
      const back = Date.now();
      await f.until(
        'every consumer asked again and held',
        async () => {
          const asked = new Set(recorder.calls.filter((c) => c.start >= back).map((c) => c.login));
          return asked.size === f.consumers.length && (await f.allHeld());
        },
        20_000,
      );
      expect(saidBack()).toBe(n);
    }
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    expect(f.logs.filter((l) => l.level >= 50 && !l.msg.startsWith('the record store at '))).toEqual([]);
  });
});
