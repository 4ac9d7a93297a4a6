/**
 * A grant secret that is there but wrong (empty, too large): blocked, said once, quiet while blocked, healed when it is
 * right.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineFixtures, readable, type Consumer } from './engine-fixture.js';

const VERIFY_MS = 300;

describe('a grant secret that is wrong, not only unreadable', () => {
  const fixture = engineFixtures();

  it('blocks an empty and an oversized secret with one error line each over many intervals, and a held consumer whose secret empties', async () => {
    const f = await fixture({
      consumers: 3,
      timing: { verifyEvery: `${VERIFY_MS}ms`, checkTimeout: '300ms', retryBase: '100ms' },
    });
    const [empty, large, held] = f.consumers as [Consumer, Consumer, Consumer];
    writeFileSync(empty.secretPath, '\n');
    writeFileSync(large.secretPath, 'x'.repeat(64 * 1024));
    const engine = await f.start();
    await f.until(
      'held is held',
      async () => (await f.status()).consumers.find((c) => c.consumer === held.key)?.state === 'held',
    );
    writeFileSync(held.secretPath, '');

    const stateOf = async (c: Consumer) => (await f.status()).consumers.find((s) => s.consumer === c.key);
    await f.until('all three blocked', async () => {
      const states = await Promise.all(f.consumers.map(stateOf));
      return states.every((s) => s?.state === 'blocked');
    });
    const sinces = new Map<string, string>();
    for (const c of f.consumers) sinces.set(c.key, (await stateOf(c))!.since);
    // ten intervals and more
    await f.until(
      'blocked for over ten intervals',
      async () => {
        const records = (await Promise.all(f.consumers.map((c) => engine.store.get(c.key)))).map(readable);
        return records.every((r) => (r?.machine.context.blockedRepeats ?? 0) > 10);
      },
      30_000,
    );

    const reasons = {
      [empty.key]: `${empty.secretPath} is empty`,
      [large.key]: `${large.secretPath} is larger than 4096 bytes`,
      [held.key]: `${held.secretPath} is empty`,
    };
    for (const c of f.consumers) {
      const shown = (await stateOf(c))!;
      expect(shown.state).toBe('blocked');
      expect(shown.healthy).toBe(false);
      expect(shown.since).toBe(sinces.get(c.key));
      expect(shown.reason).toContain(reasons[c.key]);
      const record = readable(await engine.store.get(c.key))!;
      expect(record.history.filter((h) => h.to === 'blocked')).toHaveLength(1);
      const lines = f.logsFor(c);
      const errors = lines.filter((l) => l.level >= 50);
      expect(errors.map((l) => l.msg)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^grant secret is no usable password: grant secret .*${reasons[c.key]!.replace(/[.*]/g, '\\$&').slice(-20)}`,
          ),
        ),
      ]);
      expect(lines.filter((l) => l.msg.includes(' → blocked'))).toHaveLength(1);
      expect(lines.some((l) => l.msg.includes('blocked → '))).toBe(false);
      // once blocked, never taken for a passing failure (a check that could not ask under load before is not this)
      const blockedAt = lines.find((l) => l.msg.includes(' → blocked'))!.time as number;
      const since = lines.filter((l) => (l.time as number) >= blockedAt);
      expect(since.some((l) => /could not ask|apply failed|retrying|yet/.test(l.msg))).toBe(false);
    }

    // right again: applied, held, said once
    for (const c of f.consumers) writeFileSync(c.secretPath, `${c.password}\n`);
    await f.until('all held again', () => f.allHeld(), 15_000);
    for (const c of f.consumers) expect(await f.canLogin(c)).toBe(true);
    expect(f.logsFor(empty).filter((l) => /^grant secret readable again after \d+ refusals$/.test(l.msg))).toHaveLength(
      1,
    );
  });
});
